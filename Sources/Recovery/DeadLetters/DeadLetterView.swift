import Contract

/// What an operator may see of a dead letter, in one place for `dlq list | show | replay` and the
/// console: the provenance headers, the redacted value, whether it can be replayed now, and the
/// words for a replay outcome. Nothing here reads the key or the raw value.
public enum DeadLetterView {
    /// An age of `ms` milliseconds as `dlq list` and the console print it: `42s`, `3m5s`, `2h7m`, `4d1h`
    /// (whole units, truncated; negative ages are `0s`).
    public static func age(_ ms: Int64) -> String {
        let seconds = max(0, ms / 1000)
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m\(seconds % 60)s" }
        if seconds < 86_400 { return "\(seconds / 3600)h\((seconds % 3600) / 60)m" }
        return "\(seconds / 86_400)d\((seconds % 86_400) / 3600)h"
    }

    /// Whether `entry` can be replayed at `nowMs` (its stored verdict, unless an Apple Pay window closed since).
    public static func isReplayable(_ entry: DeadLetterEntry, nowMs: Int64) -> Bool {
        (entry.provenance?.isReplayable ?? false) && !entry.summary.isExpiredApplePay(nowMs: nowMs)
    }

    /// The `dlq.*` provenance headers and `x-replay-of`, in stored order, as text.
    public static func provenanceHeaders(_ entry: DeadLetterEntry) -> [(key: String, value: String)] {
        entry.headers.filter { $0.key.hasPrefix("dlq.") || $0.key == DeadLetterHeader.replayOf }
            .map { ($0.key, $0.value.map { String(decoding: $0, as: UTF8.self) } ?? "") }
    }

    /// The value with every field outside `DeadLetterRedactor.visiblePaths` as `<redacted>`.
    public static func redactedValue(_ entry: DeadLetterEntry) -> String {
        DeadLetterRedactor.render(entry.value)
    }

    /// The note `dlq show` prints for an Apple Pay entry whose window has closed (nil otherwise).
    public static func note(_ entry: DeadLetterEntry, nowMs: Int64) -> String? {
        entry.summary.isExpiredApplePay(nowMs: nowMs)
            ? "Apple Pay window closed; certificates, nonce and signature were stripped; it cannot be replayed" : nil
    }

    /// A replay outcome as (verdict, detail): `would replay` / `replayed` / `refused` / `failed` /
    /// `replayed, not audited`, and the topic or the reason.
    public static func describe(_ outcome: DeadLetterReplayer.Outcome) -> (verdict: String, detail: String) {
        switch outcome {
        case .replayed(let topic, let dryRun): (dryRun ? "would replay" : "replayed", "to \(topic)")
        case .refused(let reason): ("refused", reason)
        case .failed(let reason): ("failed", reason)
        case .replayedNotAudited(let topic, let reason):
            ("replayed, not audited", "to \(topic); its replayed audit event could not be written (\(reason)): do not replay it again")
        }
    }
}
