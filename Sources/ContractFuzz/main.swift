// Fuzz entry point for the Contract module (decode + validate).
//
// Built by scripts/fuzz with -DFUZZING -sanitize=fuzzer -parse-as-library: libFuzzer supplies main
// and calls LLVMFuzzerTestOneInput. A plain `swift build` compiles the other branch: a tool that
// replays the files given as arguments through the same harness (regressions, crash reproduction).
#if FUZZING
/// libFuzzer's per-input callback.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
#else
import Foundation

let paths = CommandLine.arguments.dropFirst()
if paths.isEmpty {
    print("usage: ContractFuzz FILE... (replays inputs through decode + validate; scripts/fuzz runs libFuzzer)")
}
var replayed = 0
for path in paths {
    guard let data = FileManager.default.contents(atPath: path) else {
        print("ContractFuzz: cannot read \(path)")
        exit(2)
    }
    FuzzHarness.run([UInt8](data))
    replayed += 1
}
if replayed > 0 { print("ContractFuzz: replayed \(replayed) input(s) without a crash") }
#endif
