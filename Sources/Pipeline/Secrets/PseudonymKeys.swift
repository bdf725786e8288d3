import Contract

/// The keys a worker makes audit pseudonyms with, read from `audit.pseudonym_key_env` / `_file`
/// (unnamed) and `audit.pseudonym_keys` (named): the current key (the newest not retired, or the
/// newest if all have) makes `card_ref` / `device_ref`, `<id>:<hex>` under a named key; the key
/// listed before it, while not retired, makes the `…_previous` twin, so events before and after a
/// rotation join on one of them.
public struct PseudonymKeys: Sendable {
    /// One key: its id (pseudonyms carry `<id>:<hex>`; nil for the unnamed key), secret and retirement.
    public typealias Key = RotatingSecret

    /// Every key, oldest first.
    public let keys: [Key]

    /// Keys oldest first (at least one).
    public init(keys: [Key]) {
        self.keys = keys
    }

    /// The pseudonymizer at `nowMs`: the current key, with the key before it (not retired) as its
    /// previous one.
    public func pseudonymizer(nowMs: Int64) -> Pseudonymizer {
        let live = keys.filter { !$0.isRetired(nowMs: nowMs) }
        let chosen = live.isEmpty ? Array(keys.suffix(1)) : Array(live.suffix(2))
        guard let current = chosen.last else { return Pseudonymizer(key: Sensitive("")) }
        let previous = chosen.count == 2 ? chosen.first : nil
        return Pseudonymizer(key: current.secret, keyID: current.id,
                             previous: previous.map { Pseudonymizer(key: $0.secret, keyID: $0.id) })
    }
}
