import Contract
import Observability
import Pipeline

/// Renders a topic plan (and what applying it did) as an aligned table or as JSON.
enum TopicPlanOutput {
    /// Where a plan came from, for its heading.
    struct Source {
        var bootstrapServers: String
        var spec: String
        var dryRun: Bool
        /// Why the topics' configs could not be read, if they could not.
        var configsProblem: String?
    }

    static func table(_ plan: TopicPlan, source: Source) -> String {
        var lines = [heading(source)]
        lines.append(TextTable(headers: ["ROLE", "TOPIC", "ACTION", "PARTITIONS", "RF", "CONFIGS"], rows: rows(plan)).rendered)
        lines += footer(plan, source: source)
        if plan.isEmpty {
            lines.append("nothing to do: every topic matches the layout")
        } else {
            lines.append("\(plan.changes.count) change(s) planned" + (source.dryRun ? "; dry run: nothing changed" : ""))
        }
        return lines.joined(separator: "\n")
    }

    static func results(_ report: TopicApplyReport, source: Source) -> String {
        let rows = report.outcomes.map { outcome -> [String] in
            let change = outcome.change
            let result: String
            switch outcome.result {
            case .applied: result = "applied"
            case .failed(let reason): result = "failed: " + reason.split(separator: "\n").joined(separator: " ")
            case .unanswered: result = "no answer (may or may not be applied)"
            case .notAttempted: result = "not attempted"
            }
            return [change.role.rawValue, change.topic, change.action.words, partitions(change), result]
        }
        var lines = [heading(source), TextTable(headers: ["ROLE", "TOPIC", "ACTION", "PARTITIONS", "RESULT"], rows: rows).rendered]
        lines.append("applied \(report.appliedCount) of \(report.outcomes.count) step(s)"
                     + (report.isComplete ? "; run again (or with --dry-run) to confirm: nothing to do" : ""))
        return lines.joined(separator: "\n")
    }

    static func json(_ plan: TopicPlan, source: Source, report: TopicApplyReport?) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("bootstrap_servers"); writer.string(source.bootstrapServers)
        writer.key("layout"); writer.string(source.spec)
        writer.key("dry_run"); writer.bool(source.dryRun)
        writer.key("configs_read"); writer.bool(plan.configsRead)
        writer.key("configs_error"); writer.string(orNull: source.configsProblem)
        writer.key("nothing_to_do"); writer.bool(plan.isEmpty)
        writer.key("changes")
        writer.beginArray()
        for (index, change) in plan.changes.enumerated() {
            writer.beginObject()
            writer.key("role"); writer.string(change.role.rawValue)
            writer.key("topic"); writer.string(change.topic)
            writer.key("action"); writer.string(change.action.rawValue)
            writer.key("current_partitions"); writer.integer(orNull: change.currentPartitions.map(Int64.init))
            writer.key("desired_partitions"); writer.integer(Int64(change.desiredPartitions))
            writer.key("replication_factor"); writer.integer(Int64(change.replicationFactor))
            writer.key("configs")
            writer.beginArray()
            for config in change.configs {
                writer.beginObject()
                writer.key("key"); writer.string(config.key)
                writer.key("current"); writer.string(orNull: config.current)
                writer.key("current_known"); writer.bool(config.isCurrentKnown)
                writer.key("desired"); writer.string(config.desired)
                writer.endObject()
            }
            writer.endArray()
            if let report, index < report.outcomes.count {
                writer.key("result")
                switch report.outcomes[index].result {
                case .applied: writer.string("applied")
                case .failed(let reason): writer.string("failed: " + reason)
                case .unanswered: writer.string("unanswered")
                case .notAttempted: writer.string("not_attempted")
                }
            }
            writer.endObject()
        }
        writer.endArray()
        writer.key("unchanged")
        writer.beginArray()
        for topic in plan.unchangedTopics { writer.string(topic) }
        writer.endArray()
        writer.key("notes")
        writer.beginArray()
        for note in plan.notes { writer.string(note) }
        writer.endArray()
        if let report {
            writer.key("applied"); writer.integer(Int64(report.appliedCount))
            writer.key("stopped_by"); writer.string(orNull: report.stoppedBy?.message)
        }
        writer.endObject()
        return writer.text
    }

    // MARK: - Pieces

    private static func heading(_ source: Source) -> String {
        "topic plan for \(source.bootstrapServers) (layout: \(source.spec))" + (source.dryRun ? " — dry run, nothing will be changed" : "")
    }

    private static func partitions(_ change: TopicChange) -> String {
        switch change.action {
        case .create: String(change.desiredPartitions)
        case .raisePartitions: "\(change.currentPartitions ?? 0) -> \(change.desiredPartitions)"
        case .updateConfigs: String(change.currentPartitions ?? change.desiredPartitions)
        }
    }

    private static func rows(_ plan: TopicPlan) -> [[String]] {
        var rows: [[String]] = []
        for change in plan.changes {
            let cells = change.configs.map { config -> String in
                switch change.action {
                case .create: "\(config.key)=\(config.desired)"
                default: "\(config.key): \(config.isCurrentKnown ? config.current ?? "(unset)" : "unknown") -> \(config.desired)"
                }
            }
            rows.append([change.role.rawValue, change.topic, change.action.words, partitions(change), String(change.replicationFactor),
                         cells.first ?? ""])
            for cell in cells.dropFirst() { rows.append(["", "", "", "", "", cell]) }
        }
        for topic in plan.unchangedTopics {
            rows.append(["", topic, "none", "", "", "matches the layout"])
        }
        return rows
    }

    private static func footer(_ plan: TopicPlan, source: Source) -> [String] {
        var lines: [String] = []
        if let problem = source.configsProblem {
            lines.append("""
                configs: not readable (\(problem.split(separator: "\n").joined(separator: " "))); 'update configs' lists \
                every layout config of each existing topic with current value 'unknown'
                """)
        }
        for note in plan.notes { lines.append("note: " + note) }
        return lines
    }
}
