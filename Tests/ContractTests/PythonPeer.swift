import Foundation

/// Runs Python (with `jwcrypto`) as an independent peer in a subprocess.
enum PythonPeer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `script` with `arguments`, feeding `input` on stdin; returns stdout.
    static func run(_ script: String, arguments: [String] = [], input: String = "") throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python3 exited \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }
}
