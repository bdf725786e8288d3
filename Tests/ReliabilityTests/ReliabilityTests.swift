import Testing

/// The pipeline's promises under stress — worker crashes, broker faults, bad input at
/// volume, secret leaks and request authenticity. One serialized suite (each test runs its own
/// stack, consumer group and workers); every test prints one `RELIABILITY {…}` line whose figures
/// `docs/RELIABILITY.md` quotes. `PROVISIONER_LONG_TESTS=1` runs the long variants.
@Suite("Reliability: crashes, broker faults, bad input, leaks, authenticity", .serialized, .timeLimit(.minutes(30)))
struct ReliabilityTests {}
