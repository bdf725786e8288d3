import Contract
import Foundation
import Kafka
import Observability
import Pipeline
import Recovery

/// `provisioner dlq list | show | replay`: the operator's dead-letter tool.
enum DLQCommand: Command {
    static let name = "dlq"
    static let summary = "lists, shows and replays dead letters"
    static let help = """
        usage: provisioner dlq list   (--config FILE | --bootstrap B) [filters] [--parked] [--json]
               provisioner dlq show   (--config FILE | --bootstrap B) ID | --request-id R [--parked] [--json]
               provisioner dlq replay (--config FILE | --bootstrap B) [filters] [--dry-run] [--rate N] [--to TOPIC]
                                      [--operator NAME] [--sign-env VAR] [--json]

        list    a table of dead letters: age, code, program, wallet, replayable, request id, and the
                entry id (TOPIC:PARTITION:OFFSET) that 'show' takes
        show    one entry: its dlq.* provenance headers and its value with every field outside a
                short allow-list shown as <redacted>
        replay  re-produces matching entries to their dlq.original.topic (or --to), keyed as before,
                with header x-replay-of=ID; refuses entries that cannot succeed and says why (an
                Apple Pay request whose window has closed, a malformed message, a call the issuer may
                have applied); writes a 'replayed' audit event naming the operator for each. A replay
                that fails again is parked in the parked topic, never looped. Only dead letters whose
                dlq.mac verifies under the replay key are replayed (a worker with that key wrote
                them), and only to the request or reconcile topic, whatever the record names.

        filters: --code C  --program P  --wallet W  --since T  --until T  --request-id R  --limit N
                 (T: RFC 3339 like 2026-11-29T10:00:00Z, or an age like 30m, 2h, 7d)
                 list and replay take the newest \(DeadLetterFilter.defaultLimit) matching entries unless --limit N
                 asks for another number (at most \(DeadLetterFilter.maximumLimit) are kept); a read holds at most N entries
        options:
          --config FILE     worker configuration (Kafka properties and topic names)
          --bootstrap B     bootstrap servers, when no --config is given
          --parked          use the parked topic instead of the dead-letter topic
          --dry-run         replay: print what would be replayed, produce nothing
          --rate N          replay: at most N messages per second
          --to TOPIC        replay: produce to TOPIC (the request or the reconcile topic) instead of
                            each entry's original topic
          --operator NAME   replay: the name written into audit events (default $USER); with SASL the
                            Kafka principal (sasl.username) is written, NAME beside it as a label
          --sign-env VAR    replay: the replay key is in VAR; by default the keys named by the
                            configuration's dlq.replay_signing_secret_env / _file and
                            dlq.replay_keys. Each entry's dlq.mac is checked with the key its
                            dlq.mac_key_id names, until that key's not_after (without a key that
                            verifies it nothing is replayed), and each replay is signed with the
                            current key (v3, for the original partition, where it is written):
                            workers accept replays of programs with request_signing only so signed
          --json            machine-readable output
        """
    static let switchNames: Set<String> = ["json", "parked", "dry-run"]

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        guard let action = arguments.popPositional() else { throw UsageError("missing action: list, show or replay") }
        let json = arguments.flag("json")
        let parked = arguments.flag("parked")
        let (properties, topics, replayKeys) = try connection(&arguments)
        OperatorReaderMemory.giveLargeBlocksBack()
        let topic = parked ? topics.parked : topics.deadLetters
        let store = DeadLetterStore(properties: properties)
        switch action {
        case "list":
            let filter = try filter(&arguments)
            try arguments.rejectUnknown()
            let entries = try read(store, topic: topic, filter: filter)
            print(json ? listJSON(entries) : listTable(entries, topic: topic, limit: filter.limit))
            return 0
        case "show":
            let requestID = arguments.option("request-id")
            try arguments.rejectUnknown()
            let id = arguments.popPositional()
            guard id != nil || requestID != nil else { throw UsageError("show needs an entry ID (TOPIC:PARTITION:OFFSET from 'dlq list') or --request-id") }
            var filter = DeadLetterFilter()
            filter.requestID = requestID
            filter.identifier = id
            let matches = try read(store, topic: topic, filter: filter)
            guard !matches.isEmpty else { throw CommandFailure("no dead letter \(id ?? requestID ?? "") in \(topic)") }
            // The listing holds summaries; each letter shown is read again by its offset, one at a time.
            for match in matches {
                let reference = match.reference
                let letter: DeadLetterEntry
                do {
                    guard let whole = try store.letter(reference) else { throw CommandFailure("\(topic) no longer holds \(match.identifier)") }
                    letter = whole
                } catch let error as KafkaError {
                    throw CommandFailure("could not read \(match.identifier): \(error.message)")
                }
                print(json ? showJSON(letter) : showText(letter))
            }
            return 0
        case "replay":
            let filter = try filter(&arguments)
            let dryRun = arguments.flag("dry-run")
            let rate = arguments.option("rate") == nil ? nil : try arguments.number("rate", default: 10, in: 0.01...100_000)
            let target = arguments.option("to")
            let label = arguments.option("operator") ?? ProcessInfo.processInfo.environment["USER"]
            let signKeys = arguments.option("sign-env").map { [RequestSigningKey(id: nil, secret: .environment($0), keyPath: "--sign-env")] } ?? replayKeys
            try arguments.rejectUnknown()
            let targets: Set<String> = [topics.requests, topics.reconcile]
            if let target, !targets.contains(target) {
                throw UsageError("--to must be the request topic (\(topics.requests)) or the reconcile topic (\(topics.reconcile)), not \(target)")
            }
            if let label, AuditEvent.safeIdentifier(label) != label {
                throw UsageError("--operator must be 1-64 of letters, digits and ._:@-")
            }
            let operatorName = DeadLetterReplayer.operatorName(properties: properties, label: label) ?? "unknown"
            let keyring = try ReplayKeySource.keyring(signKeys)
            let entries = try read(store, topic: topic, filter: filter, keys: keyring)
            let replayer = DeadLetterReplayer(properties: properties, auditTopic: topics.audit, operatorName: operatorName,
                                              replayKeys: keyring, targetTopics: targets)
            let outcomes: [DeadLetterReplayer.Outcome]
            do {
                outcomes = try replayer.replay(entries, to: target, ratePerSecond: rate, dryRun: dryRun, nowMs: { Timestamps.nowMs() })
            } catch {
                throw CommandFailure("replay failed: \(error.message)")
            }
            print(json ? replayJSON(entries, outcomes) : replayTable(entries, outcomes, dryRun: dryRun, limit: filter.limit))
            let refusedOrFailed = outcomes.filter { if case .replayed = $0 { false } else { true } }.count
            return refusedOrFailed == 0 ? 0 : 1
        default:
            throw UsageError("unknown action '\(action)': list, show or replay")
        }
    }

    // MARK: - Arguments

    private static func connection(_ arguments: inout CommandArguments) throws -> ([String: String], TopicNames, [RequestSigningKey]) {
        if let path = arguments.option("config") {
            let configuration = try ConfigurationFile.load(path: path, environment: ProcessInfo.processInfo.environment, strict: false,
                                                           requireSecrets: false)
            return (configuration.kafka, configuration.topics, configuration.replayKeyList)
        }
        guard let bootstrap = arguments.option("bootstrap") else { throw UsageError("--config FILE or --bootstrap B is required") }
        return (["bootstrap.servers": bootstrap], TopicNames(), [])
    }

    private static func filter(_ arguments: inout CommandArguments) throws -> DeadLetterFilter {
        var fields: [String: String] = [:]
        for name in ["code", "program", "wallet", "since", "until", "request-id", "limit"] { fields[name] = arguments.option(name) }
        do {
            return try DeadLetterFilter.parse(fields, nowMs: Timestamps.nowMs())
        } catch {
            throw UsageError(error.message)
        }
    }

    /// RFC 3339, or an age (`90s`, `30m`, `2h`, `7d`) before now.
    static func time(_ text: String, name: String) throws -> Int64 {
        do {
            return try DeadLetterFilter.time(text, name: name, nowMs: Timestamps.nowMs())
        } catch {
            throw UsageError(error.message)
        }
    }

    private static func read(_ store: DeadLetterStore, topic: String, filter: DeadLetterFilter,
                             keys: ReplayKeyring? = nil) throws -> [DeadLetterEntry] {
        do {
            return try store.entries(topic: topic, filter: filter, keys: keys, nowMs: Timestamps.nowMs())
        } catch {
            throw CommandFailure("could not read \(topic): \(error.message)")
        }
    }

    // MARK: - Output

    private static func listTable(_ entries: [DeadLetterEntry], topic: String, limit: Int?) -> String {
        let now = Timestamps.nowMs()
        let rows = entries.map { entry in
            [DeadLetterView.age(now.clampedSubtracting(entry.provenance?.failedAtMs ?? entry.timestampMs ?? now)), entry.provenance?.code.rawValue ?? "?",
             entry.summary.program ?? "-", entry.summary.wallet?.rawValue ?? "-",
             DeadLetterView.isReplayable(entry, nowMs: now) ? "yes" : "no",
             entry.summary.requestID ?? "-", entry.identifier]
        }
        return TextTable(headers: ["AGE", "CODE", "PROGRAM", "WALLET", "REPLAYABLE", "REQUEST", "ID"], rows: rows).rendered
            + "\n\(entries.count) dead letter(s) in \(topic)"
            + (limit == entries.count ? ": the newest \(entries.count) matching; --limit N (at most \(DeadLetterFilter.maximumLimit)) shows more" : "")
    }

    private static func entryJSON(_ entry: DeadLetterEntry, writer: inout JSONWriter, includeValue: Bool) {
        let now = Timestamps.nowMs()
        writer.beginObject()
        writer.key("id"); writer.string(entry.identifier)
        writer.key("request_id"); writer.string(orNull: entry.summary.requestID)
        writer.key("program"); writer.string(orNull: entry.summary.program)
        writer.key("wallet"); writer.string(orNull: entry.summary.wallet?.rawValue)
        writer.key("code"); writer.string(orNull: entry.provenance?.code.rawValue)
        writer.key("reason"); writer.string(orNull: entry.provenance?.reason)
        writer.key("failed_at"); writer.string(orNull: entry.provenance.map { RFC3339.format(milliseconds: $0.failedAtMs) })
        writer.key("replayable"); writer.bool(DeadLetterView.isReplayable(entry, nowMs: now))
        writer.key("replayable_reason"); writer.string(orNull: entry.provenance?.replayableReason)
        writer.key("original"); writer.string(orNull: entry.provenance.map { "\($0.originalTopic):\($0.originalPartition):\($0.originalOffset)" })
        if includeValue {
            writer.key("headers")
            writer.beginObject()
            for header in DeadLetterView.provenanceHeaders(entry) {
                writer.key(header.key); writer.string(header.value)
            }
            writer.endObject()
            writer.key("value_redacted"); writer.string(DeadLetterView.redactedValue(entry))
        }
        writer.endObject()
    }

    private static func listJSON(_ entries: [DeadLetterEntry]) -> String {
        var writer = JSONWriter()
        writer.beginArray()
        for entry in entries { entryJSON(entry, writer: &writer, includeValue: false) }
        writer.endArray()
        return writer.text
    }

    private static func showJSON(_ entry: DeadLetterEntry) -> String {
        var writer = JSONWriter()
        entryJSON(entry, writer: &writer, includeValue: true)
        return writer.text
    }

    private static func showText(_ entry: DeadLetterEntry) -> String {
        var lines = ["dead letter \(entry.identifier)"]
        let width = DeadLetterHeader.provenance.map(\.count).max() ?? 0
        for header in DeadLetterView.provenanceHeaders(entry) {
            lines.append("  " + header.key + String(repeating: " ", count: max(1, width + 2 - header.key.count)) + header.value)
        }
        if let note = DeadLetterView.note(entry, nowMs: Timestamps.nowMs()) { lines.append("  note: " + note) }
        lines.append("  value (redacted): " + DeadLetterView.redactedValue(entry))
        return lines.joined(separator: "\n")
    }

    private static func describe(_ outcome: DeadLetterReplayer.Outcome) -> (String, String) {
        DeadLetterView.describe(outcome)
    }

    private static func replayTable(_ entries: [DeadLetterEntry], _ outcomes: [DeadLetterReplayer.Outcome], dryRun: Bool,
                                    limit: Int?) -> String {
        let rows = zip(entries, outcomes).map { entry, outcome in
            let (verdict, detail) = describe(outcome)
            return [entry.identifier, entry.summary.requestID ?? "-", entry.provenance?.code.rawValue ?? "?", verdict, detail]
        }
        let replayed = outcomes.filter { switch $0 { case .replayed, .replayedNotAudited: true; default: false } }.count
        return TextTable(headers: ["ID", "REQUEST", "CODE", "RESULT", "DETAIL"], rows: rows).rendered
            + "\n\(replayed) of \(entries.count) \(dryRun ? "would be replayed (dry run: nothing produced)" : "replayed")"
            + (limit == entries.count ? " (the newest \(entries.count) matching; --limit N takes more)" : "")
    }

    private static func replayJSON(_ entries: [DeadLetterEntry], _ outcomes: [DeadLetterReplayer.Outcome]) -> String {
        var writer = JSONWriter()
        writer.beginArray()
        for (entry, outcome) in zip(entries, outcomes) {
            let (verdict, detail) = describe(outcome)
            writer.beginObject()
            writer.key("id"); writer.string(entry.identifier)
            writer.key("request_id"); writer.string(orNull: entry.summary.requestID)
            writer.key("result"); writer.string(verdict.replacingOccurrences(of: " ", with: "_"))
            writer.key("detail"); writer.string(detail)
            writer.endObject()
        }
        writer.endArray()
        return writer.text
    }
}
