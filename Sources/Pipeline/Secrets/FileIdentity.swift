import Glibc

/// What tells a secret file's new contents from its old without reading it: the device and
/// inode the path leads to (through every symlink), its size and its change and modification
/// times. A Kubernetes secret volume swaps its `..data` symlink to a new directory (a new inode);
/// an edit in place changes the times.
struct FileIdentity: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedNs: Int64
    let changedNs: Int64

    /// The identity of what `path` leads to now, or nil when it leads nowhere (missing, a
    /// dangling symlink, no permission to search a directory on the way).
    static func current(_ path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
                            modifiedNs: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
                            changedNs: Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec))
    }
}
