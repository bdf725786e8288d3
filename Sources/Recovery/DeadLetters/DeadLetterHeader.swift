/// Header names of a dead letter (CONTRACT section 6). Values are UTF-8 text.
public enum DeadLetterHeader {
    /// Topic the message was first read from.
    public static let originalTopic = "dlq.original.topic"
    /// Partition it was read from.
    public static let originalPartition = "dlq.original.partition"
    /// Offset it was read from.
    public static let originalOffset = "dlq.original.offset"
    /// The original record timestamp (epoch ms).
    public static let originalTimestamp = "dlq.original.timestamp"
    /// Machine-readable reason (`not_json`, `unknown_version`, `publish_failed`, `reconcile_exhausted`, …).
    public static let code = "dlq.code"
    /// Human-readable reason, redacted (never a secret or a raw identifier).
    public static let reason = "dlq.reason"
    /// How many times processing was attempted.
    public static let attempts = "dlq.attempts"
    /// When it first failed (RFC 3339).
    public static let firstFailedAt = "dlq.first_failed_at"
    /// When it was dead-lettered (RFC 3339).
    public static let failedAt = "dlq.failed_at"
    /// The worker that dead-lettered it.
    public static let worker = "dlq.worker"
    /// The consumer group of that worker.
    public static let group = "dlq.group"
    /// `true` when a replay can succeed.
    public static let replayable = "dlq.replayable"
    /// Why (or why not) it can be replayed.
    public static let replayableReason = "dlq.replayable_reason"
    /// HMAC-SHA256 under the replay key over what replay trusts (`DeadLetterSeal`): `v1=` and 64
    /// lowercase hex digits. Written by workers that have a replay key; replay refuses a dead
    /// letter without one that verifies.
    public static let mac = "dlq.mac"
    /// The id of the replay key `dlq.mac` was made with (one of `dlq.replay_keys`), covered by
    /// the MAC; absent under the unnamed key (`dlq.replay_signing_secret_env` / `_file`).
    public static let macKeyID = "dlq.mac_key_id"
    /// Set by `dlq replay` on the re-produced message: `<dlq topic>:<partition>:<offset>`.
    public static let replayOf = "x-replay-of"
    /// Set by `dlq replay` beside `x-replay-of`: the operator who replayed it (covered by the
    /// replay's v2 signature, written into the worker's audit events).
    public static let replayOperator = "x-replay-operator"
    /// On the dead letter of a record over its bounds (`oversize`: it keeps no value): the
    /// record's key length in bytes (absent when it had no key).
    public static let originalKeyBytes = "dlq.original.key_bytes"
    /// On an `oversize` dead letter: the record's value length in bytes.
    public static let originalValueBytes = "dlq.original.value_bytes"
    /// On an `oversize` dead letter: how many headers the record had.
    public static let originalHeaderCount = "dlq.original.header_count"
    /// On an `oversize` dead letter: the record's header names' and values' bytes added up.
    public static let originalHeaderBytes = "dlq.original.header_bytes"
    /// On an `oversize` dead letter: the SHA-256 of the record's value, 64 lowercase hex digits
    /// (to find the record its producer sent; it reveals nothing of the value).
    public static let originalValueSHA256 = "dlq.original.value_sha256"
    /// W3C trace context, propagated.
    public static let traceparent = "traceparent"

    /// Every `dlq.*` header a worker always writes (`dlq.mac` is written beside them when the
    /// worker has a replay key; the `dlq.original.*` sizes and digest on an `oversize` one).
    public static let provenance: [String] = [
        originalTopic, originalPartition, originalOffset, originalTimestamp, code, reason, attempts,
        firstFailedAt, failedAt, worker, group, replayable, replayableReason,
    ]
}
