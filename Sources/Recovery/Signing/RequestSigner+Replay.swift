import Contract

extension RequestSigner {
    /// The replay key variable is named but holds nothing.
    public struct MissingKey: Error, Sendable {
        /// The variable's name (never its value).
        public var variable: String
        /// One line for the operator.
        public var message: String { "the replay key variable \(variable) is not set: set it to the workers' replay key (dead letters are checked against it and replays signed with it)" }
    }

    /// The signer for operator replays (`dlq replay`, the console): the key in environment variable
    /// `variable` (`dlq.replay_signing_secret_env`, or `--sign-env`); nil when no variable is named.
    public static func replaySigner(variable: String?, environment: [String: String]) throws(MissingKey) -> RequestSigner? {
        guard let variable else { return nil }
        guard let key = environment[variable], !key.isEmpty else { throw MissingKey(variable: variable) }
        return RequestSigner(secret: Sensitive(key))
    }
}
