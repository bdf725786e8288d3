import Foundation
@testable import ProvisionerBench
import Testing

/// `bench instructions` reads totals and allocator calls from a callgrind dump (name compression included).
@Suite("bench instructions: what a callgrind dump counts", .timeLimit(.minutes(1)))
struct CallgrindCountTests {
    @Test("allocator calls are counted once, not again where glibc's realloc or posix_memalign call malloc")
    func allocatorCallsCountedOnce() throws {
        let dump = """
            version: 1
            events: Ir
            fn=(1) work
            cfn=(2) malloc
            calls=7 0
            3 70
            cfn=(3) realloc
            calls=2 0
            4 20
            cfn=(4) posix_memalign
            calls=1 0
            5 10
            fn=(3)
            cfn=(2)
            calls=2 0
            6 8
            fn=(5) _mid_memalign.constprop.0
            cfn=(2)
            calls=1 0
            7 4
            fn=(4)
            cfn=(5)
            calls=1 0
            8 5
            fn=(6) other
            cfn=(7) calloc
            calls=3 0
            9 30
            totals: 1234
            """
        let path = NSTemporaryDirectory() + "callgrind-count-\(getpid()).out"
        try dump.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let parsed = try InstructionsBenchmark.parse(path)
        #expect(parsed.instructions == 1_234)
        // work: 7 malloc + 2 realloc + 1 posix_memalign; other: 3 calloc. The malloc calls made by
        // realloc (2) and by posix_memalign's _mid_memalign (1) are the same allocations again.
        #expect(parsed.allocations == 13)
    }
}
