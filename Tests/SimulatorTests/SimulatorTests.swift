import Testing

/// Root of the simulator suites. Serialized: several tests measure answer times on a two-core
/// machine, and an in-process simulator per test keeps them independent.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SimulatorTests {}
