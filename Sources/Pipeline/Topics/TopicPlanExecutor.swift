import Kafka

/// Carries out a `TopicPlan` through `KafkaAdmin`: one CreateTopics request for the missing topics,
/// one CreatePartitions request for the raises, then one AlterConfigs per topic whose configs
/// differ (each keeps the topic's other dynamic configs). A request that fails as a whole stops
/// the run; the report says which steps were applied, which got no answer (their effect unknown),
/// and which were not attempted.
public enum TopicPlanExecutor {
    /// Applies `plan` with `admin`, each request bounded by `timeoutMs`.
    public static func apply(_ plan: TopicPlan, admin: KafkaAdmin, timeoutMs: Int32) -> TopicApplyReport {
        var results: [TopicChange: TopicChangeOutcome.Result] = [:]
        var stoppedBy: KafkaError?
        var stoppedRequest: String?

        let creates = plan.changes.filter { $0.action == .create }
        if !creates.isEmpty {
            let specifications = creates.map { change in
                KafkaTopicSpecification(name: change.topic, partitions: change.desiredPartitions, replicationFactor: change.replicationFactor,
                                        configs: Dictionary(change.configs.map { ($0.key, $0.desired) }, uniquingKeysWith: { _, last in last }))
            }
            do {
                let outcome = try admin.createTopics(specifications, timeoutMs: timeoutMs)
                for change in creates { results[change] = result(outcome, change.topic) }
            } catch {
                (stoppedBy, stoppedRequest) = (error, "CreateTopics")
                for change in creates { results[change] = failure(error) }
            }
        }

        let raises = plan.changes.filter { $0.action == .raisePartitions }
        if stoppedBy == nil && !raises.isEmpty {
            do {
                let totals = Dictionary(raises.map { ($0.topic, $0.desiredPartitions) }, uniquingKeysWith: { first, _ in first })
                let outcome = try admin.createPartitions(totals, timeoutMs: timeoutMs)
                for change in raises { results[change] = result(outcome, change.topic) }
            } catch {
                (stoppedBy, stoppedRequest) = (error, "CreatePartitions")
                for change in raises { results[change] = failure(error) }
            }
        }

        for change in plan.changes where change.action == .updateConfigs && stoppedBy == nil {
            do {
                let entries = Dictionary(change.configs.map { ($0.key, $0.desired) }, uniquingKeysWith: { _, last in last })
                try admin.alterTopicConfigs([change.topic: entries], timeoutMs: timeoutMs)
                results[change] = .applied
            } catch where error.code == .timedOut || error.code == .destroyed {
                (stoppedBy, stoppedRequest) = (error, "AlterConfigs")
                results[change] = failure(error)
            } catch {
                results[change] = .failed(error.message)
            }
        }

        let outcomes = plan.changes.map { TopicChangeOutcome(change: $0, result: results[$0] ?? .notAttempted) }
        return TopicApplyReport(outcomes: outcomes, stoppedBy: stoppedBy, stoppedRequest: stoppedRequest)
    }

    /// A step whose request failed as a whole: unanswered on a timeout, else failed.
    private static func failure(_ error: KafkaError) -> TopicChangeOutcome.Result {
        error.code == .timedOut ? .unanswered : .failed(error.message)
    }

    private static func result(_ outcome: [String: KafkaError?], _ topic: String) -> TopicChangeOutcome.Result {
        switch outcome[topic] {
        case .some(.none): .applied
        case .some(.some(let error)): .failed(error.message)
        case .none: .failed("the cluster's answer did not mention this topic; run the plan again to see where it stands")
        }
    }
}
