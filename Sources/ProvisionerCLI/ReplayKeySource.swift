import Contract
import Foundation
import Pipeline
import Recovery

/// The replay keys of the operator tools (`dlq replay`, the console): the workers'
/// `dlq.replay_signing_secret_env` / `_file` and `dlq.replay_keys`, or `--sign-env VAR`, read once
/// when the tool starts.
enum ReplayKeySource {
    /// The keyring of `keys` (oldest first), nil when none is named; fails naming the key and its
    /// source (never a value) when one cannot be read.
    static func keyring(_ keys: [RequestSigningKey]) throws -> ReplayKeyring? {
        guard !keys.isEmpty else { return nil }
        let reader = SecretReader(environment: ProcessInfo.processInfo.environment)
        return ReplayKeyring(keys: try keys.map { key in
            switch reader.read(key.secret) {
            case .success(let secret):
                return ReplayKeyring.Key(id: key.id, secret: secret, notAfterMs: key.notAfterMs)
            case .failure(let problem):
                throw CommandFailure("the replay key \(key.keyPath) \(problem): it must hold the workers' replay key "
                                         + "(dead letters are checked against it and replays signed with it)")
            }
        })
    }
}
