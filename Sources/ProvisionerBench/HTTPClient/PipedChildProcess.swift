import Foundation

/// This executable started again with other arguments, its standard input and output piped.
final class PipedChildProcess {
    private let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffered: [UInt8] = []

    /// Starts `provisioner-bench <arguments>`; standard error is shared with this process.
    init(arguments: [String]) throws(BenchmarkError) {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = input
        do {
            try process.run()
        } catch {
            throw BenchmarkError("could not start \(executable) \(arguments.joined(separator: " ")): \(error); check the binary is executable")
        }
    }

    /// The next line of standard output, or nil at end of output.
    func readLine() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeFirst(newline + 1)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard !buffered.isEmpty else { return nil }
                defer { buffered.removeAll() }
                return String(decoding: buffered, as: UTF8.self)
            }
            buffered.append(contentsOf: chunk)
        }
    }

    /// Closes the child's standard input (the server child stops on end of input).
    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Waits for the child to exit and returns its exit status.
    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}
