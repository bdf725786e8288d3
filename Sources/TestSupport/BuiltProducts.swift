import Foundation

/// Finds executables that `swift build` placed next to the running test binary.
public enum BuiltProducts {
    /// The directory holding the running test binary (`.build/<triple>/debug` under SwiftPM).
    public static var directory: String {
        #if os(Linux)
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return (executable as NSString).deletingLastPathComponent
        }
        #endif
        if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
            return (bundle.bundlePath as NSString).deletingLastPathComponent
        }
        return (CommandLine.arguments[0] as NSString).deletingLastPathComponent
    }

    /// The path of the built product `name`; throws, saying how to build it, when it is missing.
    public static func path(of name: String) throws(TestSupportError) -> String {
        let path = (directory as NSString).appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupportError("""
                the executable '\(name)' was not found at \(path); build it first \
                ('swift build --build-tests' builds it with the tests)
                """)
        }
        return path
    }

    /// The `provisioner` executable: `$PROVISIONER_BINARY` when set, else the one built next to the
    /// test binary (for example `.build/debug/provisioner`).
    public static var provisionerPath: String {
        get throws(TestSupportError) {
            if let override = ProcessInfo.processInfo.environment["PROVISIONER_BINARY"], !override.isEmpty {
                guard FileManager.default.isExecutableFile(atPath: override) else {
                    throw TestSupportError("PROVISIONER_BINARY is set to '\(override)', which is not an executable file")
                }
                return override
            }
            return try path(of: "provisioner")
        }
    }
}
