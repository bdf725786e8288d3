/// Remembers DCS `X-DAPI-NONCE` values for as long as their timestamps are inside the window.
///
/// An entry can be forgotten once its timestamp is older than the window: a replay of it then
/// fails the timestamp check anyway.
struct DAPINonceWindow: Sendable {
    private var expiries: [String: Int64] = [:]
    private var queue: [(nonce: String, expiresAtMs: Int64)] = []
    private var head = 0

    /// Records `nonce`; false when it was seen before and has not expired.
    mutating func insert(_ nonce: String, timestampMs: Int64, windowMs: Int64, nowMs: Int64) -> Bool {
        prune(nowMs: nowMs)
        if let expiry = expiries[nonce], expiry >= nowMs { return false }
        let expiry = max(timestampMs, nowMs) + windowMs
        expiries[nonce] = expiry
        queue.append((nonce, expiry))
        return true
    }

    /// Forgets everything.
    mutating func removeAll() {
        expiries.removeAll()
        queue.removeAll()
        head = 0
    }

    private mutating func prune(nowMs: Int64) {
        while head < queue.count, queue[head].expiresAtMs < nowMs {
            let entry = queue[head]
            if expiries[entry.nonce] == entry.expiresAtMs { expiries.removeValue(forKey: entry.nonce) }
            head += 1
        }
        if head > 1024, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }
}
