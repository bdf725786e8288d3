import Contract
import Kafka

/// The one place results are addressed (CONTRACT section 11, reply routing): the default results
/// topic keyed by `request_id`, or the request's `kafka_replyTopic` / `kafka_replyPartition` with
/// its `kafka_correlationId` echoed, when configuration allows that topic for the request's
/// program (`programs.<name>.reply_topics`, else `results.reply_topics`); with
/// `results.mirror_replies`, a copy on the default topic too.
///
/// Every result of a request — its first answer, a reconciled final, the answer to a replay or to
/// a redelivery — is built here from the same route, so all go to the same place.
struct ReplyRouting: Sendable {
    /// Reply topics one program may name: names, and prefixes (entries that ended in `*`, without it).
    struct Allowlist: Sendable {
        let names: Set<String>
        let prefixes: [String]

        /// The list `entries` (`results.reply_topics` or a program's `reply_topics`) allows.
        init(_ entries: [String]) {
            names = Set(entries.filter { !$0.hasSuffix("*") })
            prefixes = entries.filter { $0.hasSuffix("*") }.map { String($0.dropLast()) }
        }

        /// Whether `topic` is on the list.
        func contains(_ topic: String) -> Bool {
            names.contains(topic) || prefixes.contains { topic.hasPrefix($0) }
        }

        /// The list of reply topics `topics` is (`results.reply_topics`, `programs.<name>.reply_topics`
        /// at `keyPath`): topic names, or prefixes ending in `*`; nil, and an issue, when it is not one.
        static func entries(_ topics: JSONValue, keyPath: String, issues: inout [ConfigurationIssue]) -> [String]? {
            let entries = topics.arrayValue?.compactMap(\.stringValue) ?? []
            guard topics.arrayValue != nil, entries.count == topics.arrayValue?.count, entries.allSatisfy(ReplyRouting.isValidEntry) else {
                issues.append(.init(.error, keyPath, "must be a list of topic names, or prefixes ending in '*' (1-249 of [A-Za-z0-9._-] before it)"))
                return nil
            }
            return entries
        }
    }

    /// The default results topic.
    let resultsTopic: String
    /// Topics no request may name, whatever `results.reply_topics` says (requests, markers, ...).
    let internalTopics: Set<String>
    /// `results.reply_topics`: what a program without a list of its own allows.
    let defaultAllowlist: Allowlist
    /// Programs with their own `reply_topics`.
    let programAllowlists: [String: Allowlist]
    let mirror: Bool
    /// Whether an allowed route's topic and partition exist (nil: not checked).
    let topicCheck: ReplyTopicCheck?

    /// Routing by `configuration`; `topicCheck` refuses routes to topics or partitions the cluster
    /// does not have.
    init(configuration: WorkerConfiguration, topicCheck: ReplyTopicCheck? = nil) {
        let topics = configuration.topics
        resultsTopic = topics.results
        internalTopics = Set(topics.all).subtracting([topics.results])
        defaultAllowlist = Allowlist(configuration.replyTopics)
        programAllowlists = configuration.programs.compactMapValues { program in program.replyTopics.map(Allowlist.init) }
        mirror = configuration.mirrorReplies
        self.topicCheck = topicCheck
    }

    /// Whether `entry` is a valid `results.reply_topics` entry: a topic name, or a prefix of one followed by `*`.
    static func isValidEntry(_ entry: String) -> Bool {
        entry.hasSuffix("*") ? RecordBounds.isTopicName(entry.dropLast()) : RecordBounds.isTopicName(entry)
    }

    /// Whether results of a request of `program` (nil: a message whose program is unknown) may be
    /// routed to `topic`: the default results topic, or one the program's `reply_topics` (else
    /// `results.reply_topics`) allows that is not one of the pipeline's other topics.
    func allows(_ topic: String, program: String?) -> Bool {
        if topic == resultsTopic { return true }
        guard !internalTopics.contains(topic) else { return false }
        return (program.flatMap { programAllowlists[$0] } ?? defaultAllowlist).contains(topic)
    }

    /// A request's route as headers say it, checked for a request of `program` (and against the
    /// cluster's topics: `topicCheck`): the route to use (nil: the default topic) and, when the
    /// request must be refused (`invalid_request`), why. A
    /// refused route keeps a well-formed correlation id, so the refusal on the default topic can
    /// still be matched (when the message is authentic: `Intake.earlyRejectionRoute`).
    func check(_ read: Result<ReplyRoute?, ReplyRoute.Problem>, program: String?) -> (route: ReplyRoute?, refusal: String?) {
        switch read {
        case .failure(let problem):
            return (nil, problem.reason)
        case .success(nil):
            return (nil, nil)
        case .success(let route?):
            guard let topic = route.topic else { return (route, nil) }
            let refusal: String
            if !allows(topic, program: program) {
                refusal = program.flatMap { programAllowlists[$0] } == nil
                    ? "the reply topic named by \(ReplyRoute.topicHeader) is not allowed by results.reply_topics"
                    : "the reply topic named by \(ReplyRoute.topicHeader) is not allowed by the program's reply_topics"
            } else if let problem = topicCheck?.problem(topic: topic, partition: route.partition) {
                refusal = problem
            } else {
                return (route, nil)
            }
            return (route.correlationID.map { ReplyRoute(topic: nil, correlationID: $0) }, refusal)
        }
    }

    /// The route a record read back (a reconciliation job of `program`) names, checked against
    /// today's configuration: a topic no longer allowed falls back to the default topic.
    func recheck(_ route: ReplyRoute?, program: String) -> ReplyRoute? {
        check(.success(route), program: program).route
    }

    /// The messages that publish `value` (an encoded result for `requestID`) along `route`, with
    /// `headers` (trace context, `x-replay-of`) and the correlation id.
    func messages(requestID: String, value: [UInt8], route: ReplyRoute?, headers: [KafkaHeader]) -> [KafkaOutgoingMessage] {
        let key = Array(requestID.utf8)
        var headers = headers
        if let correlation = route?.correlationID { headers.append(KafkaHeader(key: ReplyRoute.correlationHeader, value: correlation)) }
        guard let route, let topic = route.topic, topic != resultsTopic || route.partition != nil else {
            return [KafkaOutgoingMessage(topic: resultsTopic, key: key, value: value, headers: headers)]
        }
        var messages = [KafkaOutgoingMessage(topic: topic, key: key, value: value, headers: headers, partition: route.partition)]
        if mirror && topic != resultsTopic {
            messages.append(KafkaOutgoingMessage(topic: resultsTopic, key: key, value: value, headers: headers))
        }
        return messages
    }
}
