import Testing

/// Every HTTP test, run one at a time: several measure time or count threads and connections,
/// which concurrent tests in the same suite would disturb.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HTTPTests {}
