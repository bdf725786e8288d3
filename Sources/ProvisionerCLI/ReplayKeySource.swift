import Contract
import Foundation
import Pipeline
import Recovery

/// The replay key of the operator tools (`dlq replay`, the console): the workers'
/// `dlq.replay_signing_secret_env` / `_file`, or `--sign-env VAR`, read once when the tool starts.
enum ReplayKeySource {
    /// The signer for `source`, nil when no replay key is named; fails naming the source (never
    /// the value) when it cannot be read.
    static func signer(_ source: SecretSource?) throws -> RequestSigner? {
        guard let source else { return nil }
        switch SecretReader(environment: ProcessInfo.processInfo.environment).read(source) {
        case .success(let key):
            return RequestSigner(secret: key)
        case .failure(let problem):
            throw CommandFailure("the replay key \(problem): it must hold the workers' replay key (dead letters are checked against it and replays signed with it)")
        }
    }
}
