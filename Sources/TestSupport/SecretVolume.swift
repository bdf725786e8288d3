import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A directory laid out as a Kubernetes secret volume: each key a symlink `KEY -> ..data/KEY`,
/// `..data` a symlink to a timestamped directory holding the files, and an update a new
/// directory put in place by renaming a fresh `..data` symlink over the old one (one atomic step,
/// as the kubelet's atomic writer does). Removed when released.
public final class SecretVolume: @unchecked Sendable {
    /// The volume's directory (the mount point).
    public let root: URL
    private var generation = 0
    private let names: Set<String>

    /// Creates the volume with `files` (name → contents); later swaps may only use these names.
    public init(_ files: [String: String]) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("secret-volume-\(UUID().uuidString)")
        names = Set(files.keys)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try swap(files)
        for name in files.keys {
            try FileManager.default.createSymbolicLink(atPath: path(name), withDestinationPath: "..data/\(name)")
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// The path a configuration names for key `name` (the symlink at the volume's top).
    public func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    /// Writes `files` into a new directory and points `..data` at it in one rename; a name left
    /// out is missing afterwards (its symlink dangles). The previous directory is removed.
    public func swap(_ files: [String: String]) throws {
        precondition(Set(files.keys).isSubset(of: names), "a secret volume's keys are fixed when it is created")
        let previous = generation == 0 ? nil : directoryName(generation)
        generation += 1
        let directory = directoryName(generation)
        try FileManager.default.createDirectory(at: root.appendingPathComponent(directory), withIntermediateDirectories: false)
        for (name, value) in files {
            try Data(value.utf8).write(to: root.appendingPathComponent(directory).appendingPathComponent(name))
        }
        let temporary = root.appendingPathComponent("..data_tmp").path
        try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: directory)
        guard rename(temporary, root.appendingPathComponent("..data").path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        if let previous { try? FileManager.default.removeItem(at: root.appendingPathComponent(previous)) }
    }

    private func directoryName(_ generation: Int) -> String { "..2026_12_06_00_00_00.\(generation)" }
}
