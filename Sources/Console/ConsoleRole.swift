/// What a console token may do: `viewer` reads every page; `replayer` may also replay dead letters.
public enum ConsoleRole: String, Sendable, Hashable, CaseIterable {
    /// Reads pages and streams; previews replays (a dry run produces nothing).
    case viewer
    /// Everything a viewer may, and replays dead letters.
    case replayer

    /// Whether this role may replay.
    public var mayReplay: Bool { self == .replayer }
}
