#if !FUZZING
import Foundation

/// Replays input files through `FuzzHarness` (the non-fuzzing build of ContractFuzz).
enum FuzzReplay {
    /// Replays every file; exits 2 when one cannot be read. Returns 0.
    static func run(paths: [String]) -> Int32 {
        if paths.isEmpty {
            print("usage: ContractFuzz FILE... (replays inputs through decode + validate; scripts/fuzz runs libFuzzer)")
            return 0
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("ContractFuzz: cannot read \(path)")
                exit(2)
            }
            FuzzHarness.run([UInt8](data))
        }
        print("ContractFuzz: replayed \(paths.count) input(s) without a crash")
        return 0
    }
}
#endif
