// Fuzz entry point for the Contract module (decode + validate).
//
// scripts/fuzz builds this with -DFUZZING -sanitize=fuzzer -parse-as-library. SwiftPM links every
// executable with `--defsym main=ContractFuzz_main` (its entry point is renamed so executables stay
// testable), which hides libFuzzer's own `main`; so the FUZZING branch defines ContractFuzz_main
// and starts libFuzzer's driver itself, on LLVMFuzzerTestOneInput.
//
// A plain `swift build` compiles the other branch: a tool that replays the files given as arguments
// through the same harness (regressions, reproducers). Both branches hold declarations only, so the
// file parses in library mode as well; in script mode the global below is initialized, and the
// replay runs, when the program starts.
#if FUZZING
/// libFuzzer's per-input callback: decode + validate one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else {
        FuzzHarness.run([])
        return 0
    }
    FuzzHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's driver (compiler-rt `FuzzerInterface.h`).
@_extern(c, "LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// The program entry SwiftPM's linker flags point `main` at.
@_cdecl("ContractFuzz_main")
public func contractFuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var vector = argv
    return runFuzzerDriver(&count, &vector, fuzzOneInput)
}
#else
/// Runs the replay tool at program start.
let replayStatus: Int32 = FuzzReplay.run(paths: Array(CommandLine.arguments.dropFirst()))
#endif
