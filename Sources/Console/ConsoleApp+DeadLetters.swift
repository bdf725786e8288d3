import Contract
import Dispatch
import HTTP
import Kafka
import Observability
import Recovery

extension ConsoleApp {
    static let filterNames = ["code", "program", "wallet", "since", "until", "request-id", "limit"]

    /// Summaries (no bodies) of the matching entries, at most `DeadLetterFilter.maximumLimit`,
    /// each seal checked with the replay key while its body was at hand.
    private func entries(parked: Bool, filter: DeadLetterFilter) throws(KafkaError) -> [DeadLetterEntry] {
        try DeadLetterStore(properties: context.kafka).entries(topic: parked ? context.topics.parked : context.topics.deadLetters, filter: filter,
                                                               keys: context.replayKeys, nowMs: Timestamps.nowMs())
    }

    /// The parked entries the dead-letters page lists beside the dead letters.
    static let parkedShown = 50

    private static func filterForm(_ fields: [String: String], parked: Bool) -> String {
        var html = "<form class=\"filters\" method=\"get\" action=\"/dead-letters\" id=\"filters\">"
        for (name, label) in [("code", "Code"), ("program", "Program"), ("wallet", "Wallet"), ("since", "Since (30m, RFC 3339)"),
                              ("until", "Until"), ("request-id", "Request id"), ("limit", "Limit")] {
            html += "<label>\(label)<input name=\"\(name)\" id=\"filter-\(name)\" value=\"\(HTML.escape(fields[name] ?? ""))\" size=\"14\"></label>"
        }
        html += "<label>Topic<select name=\"parked\" id=\"filter-parked\"><option value=\"0\"\(parked ? "" : " selected")>dead letters</option>"
        html += "<option value=\"1\"\(parked ? " selected" : "")>parked</option></select></label>"
        html += "<button type=\"submit\" id=\"filter-submit\">Filter</button></form>"
        return html
    }

    private static func filterFields(_ fields: [String: String], parked: Bool) -> String {
        filterNames.compactMap { name in fields[name].flatMap { $0.isEmpty ? nil : HTML.hidden(name, $0) } }.joined()
            + HTML.hidden("parked", parked ? "1" : "0")
    }

    private static func listRows(_ entries: [DeadLetterEntry], nowMs: Int64, parked: Bool) -> String {
        var html = "<table id=\"\(parked ? "parked-list" : "dead-letter-list")\"><thead><tr><th>Age</th><th>Code</th><th>Program</th><th>Wallet</th>"
        html += "<th>Replayable</th><th>Request</th><th>Entry</th></tr></thead><tbody>"
        for entry in entries {
            let age = DeadLetterView.age(nowMs - (entry.provenance?.failedAtMs ?? entry.timestampMs ?? nowMs))
            html += "<tr class=\"dead-letter\"><td>\(age)</td><td>\(HTML.escape(entry.provenance?.code.rawValue ?? "?"))</td>"
            html += "<td>\(HTML.escape(entry.summary.program ?? "-"))</td><td>\(HTML.escape(entry.summary.wallet?.rawValue ?? "-"))</td>"
            html += "<td>\(DeadLetterView.isReplayable(entry, nowMs: nowMs) ? "yes" : "no")</td>"
            html += "<td class=\"request-id\">\(HTML.escape(entry.summary.requestID ?? "-"))</td>"
            html += "<td><a href=\"/dead-letters/entry?id=\(HTML.query(entry.identifier))\(parked ? "&amp;parked=1" : "")\">\(HTML.escape(entry.identifier))</a></td></tr>"
        }
        if entries.isEmpty { html += "<tr><td colspan=\"7\" class=\"empty\">none</td></tr>" }
        return html + "</tbody></table>"
    }

    func deadLettersPage(_ query: [String: String], session: ConsoleSession) -> HTTPServerResponse {
        let now = Timestamps.nowMs()
        let parked = query["parked"] == "1"
        let filter: DeadLetterFilter
        do {
            filter = try DeadLetterFilter.parse(query, nowMs: now)
        } catch {
            return Self.problem("Dead letters", error.message, session: session, current: "/dead-letters", status: 400)
        }
        let listed: [DeadLetterEntry]
        let parkedEntries: [DeadLetterEntry]
        do {
            listed = try entries(parked: parked, filter: filter)
            var recent = DeadLetterFilter()
            recent.limit = Self.parkedShown
            parkedEntries = parked ? [] : try entries(parked: true, filter: recent)
        } catch {
            return Self.problem("Dead letters", "could not read the dead-letter topics: \(error.description)", session: session, current: "/dead-letters")
        }
        var html = "<h2>Dead letters</h2>" + Self.filterForm(query, parked: parked)
        html += "<div class=\"columns\"><div><h3 id=\"dead-letter-count\">\(listed.count) in \(HTML.escape(parked ? context.topics.parked : context.topics.deadLetters))</h3>"
        if let limit = filter.limit, listed.count == limit {
            html += "<p class=\"note\" id=\"limit-note\">The newest \(limit) matching; set Limit (at most \(DeadLetterFilter.maximumLimit) are kept) for more.</p>"
        }
        html += Self.listRows(listed, nowMs: now, parked: parked)
        html += "<form method=\"post\" action=\"/dead-letters/preview\">\(HTML.hidden("csrf", session.csrfToken))\(Self.filterFields(query, parked: parked))"
        html += "<button type=\"submit\" id=\"preview-submit\"\(listed.isEmpty ? " disabled" : "")>Preview replay of these \(listed.count) (dry run)</button></form></div>"
        if !parked {
            html += "<div><h3 id=\"parked-count\">Parked: \(parkedEntries.count)\(parkedEntries.count == Self.parkedShown ? " (the newest)" : "")</h3><p class=\"note\">Replays that failed again (never looped).</p>"
            html += "<table id=\"parked-list\"><thead><tr><th>Code</th><th>Request</th></tr></thead><tbody>"
            for entry in parkedEntries.reversed() {
                html += "<tr><td>\(HTML.escape(entry.provenance?.code.rawValue ?? "?"))</td><td><a href=\"/dead-letters/entry?id=\(HTML.query(entry.identifier))&amp;parked=1\">"
                html += "\(HTML.escape(entry.summary.requestID ?? entry.identifier))</a></td></tr>"
            }
            if parkedEntries.isEmpty { html += "<tr><td colspan=\"2\" class=\"empty\">none</td></tr>" }
            html += "</tbody></table><p><a href=\"/dead-letters?parked=1\">All parked entries</a></p></div>"
        }
        html += "</div>"
        return Self.document(title: "Dead letters", body: html, session: session, current: "/dead-letters")
    }

    func entryPage(_ id: String?, parked: Bool, session: ConsoleSession) -> HTTPServerResponse {
        guard let id, ReplayReference(id) != nil else { return Self.notFound }
        let found: DeadLetterEntry?
        do {
            // The one letter shown, read by its offset: its redacted value needs the body.
            let reference = ReplayReference(id)
            let topic = parked ? context.topics.parked : context.topics.deadLetters
            found = try reference.flatMap { reference throws(KafkaError) in
                reference.topic == topic ? try DeadLetterStore(properties: context.kafka).letter(reference) : nil
            }
        } catch {
            return Self.problem("Dead letter", "could not read the dead-letter topic: \(error.description)", session: session, current: "/dead-letters")
        }
        guard let entry = found else { return Self.problem("Dead letter", "no dead letter \(id)", session: session, current: "/dead-letters", status: 404) }
        var html = "<h2>Dead letter \(HTML.escape(entry.identifier))</h2>"
        html += HTML.table(["Header", "Value"], DeadLetterView.provenanceHeaders(entry).map { [$0.key, $0.value] }, id: "provenance")
        if let note = DeadLetterView.note(entry, nowMs: Timestamps.nowMs()) { html += "<p class=\"note\">note: \(HTML.escape(note))</p>" }
        html += "<h3>Value (redacted)</h3><pre id=\"redacted-value\">\(HTML.escape(DeadLetterView.redactedValue(entry)))</pre>"
        if let requestID = entry.summary.requestID {
            html += "<p><a href=\"/trace?q=\(HTML.query(requestID))\">Trace request \(HTML.escape(requestID))</a></p>"
        }
        return Self.document(title: "Dead letter", body: html, session: session, current: "/dead-letters")
    }

    private func replayer(session: ConsoleSession) -> DeadLetterReplayer {
        let name = DeadLetterReplayer.operatorName(properties: context.kafka, label: session.name) ?? session.name
        return DeadLetterReplayer(properties: context.kafka, auditTopic: context.topics.audit, operatorName: name, replayKeys: context.replayKeys,
                                  targetTopics: replayTargets)
    }

    /// The only topics a replay may go to: the request and reconcile topics.
    private var replayTargets: Set<String> {
        [context.topics.requests, context.topics.reconcile]
    }

    /// The entries a replay form names, and the dry-run outcome of each.
    private func dryRun(_ fields: [String: String]) throws -> (entries: [DeadLetterEntry], outcomes: [DeadLetterReplayer.Outcome], parked: Bool) {
        let parked = fields["parked"] == "1"
        let filter = try DeadLetterFilter.parse(fields, nowMs: Timestamps.nowMs())
        let chosen = try entries(parked: parked, filter: filter)
        let outcomes = try DeadLetterReplayer(properties: context.kafka, auditTopic: context.topics.audit, operatorName: "preview",
                                              replayKeys: context.replayKeys, targetTopics: replayTargets)
            .replay(chosen, to: nil, ratePerSecond: nil, dryRun: true, nowMs: { Timestamps.nowMs() })
        return (chosen, outcomes, parked)
    }

    /// What a replay confirmation binds: SHA-256 (hex) of the identifiers of the
    /// entries that would be replayed, sorted. A filter such as a relative `since` selects again
    /// when the replay is posted; another set of the same size must not pass as the one previewed.
    static func selectionDigest(_ entries: [DeadLetterEntry], _ outcomes: [DeadLetterReplayer.Outcome]) -> String {
        let chosen = zip(entries, outcomes).compactMap { entry, outcome -> String? in
            if case .replayed = outcome { entry.identifier } else { nil }
        }
        return Crypto.hex(Crypto.sha256(utf8: chosen.sorted().joined(separator: "\n")))
    }

    func previewPage(_ fields: [String: String], session: ConsoleSession) -> HTTPServerResponse {
        let preview: (entries: [DeadLetterEntry], outcomes: [DeadLetterReplayer.Outcome], parked: Bool)
        do {
            preview = try dryRun(fields)
        } catch let problem as DeadLetterFilter.ParseProblem {
            return Self.problem("Replay preview", problem.message, session: session, current: "/dead-letters", status: 400)
        } catch {
            return Self.problem("Replay preview", "could not read the dead-letter topic: \(error)", session: session, current: "/dead-letters")
        }
        let wouldReplay = preview.outcomes.filter { if case .replayed = $0 { true } else { false } }.count
        var html = "<h2>Replay preview (dry run: nothing produced)</h2>"
        html += "<p id=\"preview-summary\">\(wouldReplay) of \(preview.entries.count) would be replayed; \(preview.entries.count - wouldReplay) refused.</p>"
        html += HTML.table(["Entry", "Request", "Code", "Result", "Detail"], zip(preview.entries, preview.outcomes).map { entry, outcome in
            let (verdict, detail) = DeadLetterView.describe(outcome)
            return [entry.identifier, entry.summary.requestID ?? "-", entry.provenance?.code.rawValue ?? "?", verdict, detail]
        }, id: "preview")
        if !session.role.mayReplay {
            html += "<p class=\"note\" id=\"viewer-note\">Your token is a viewer: replaying needs a replayer token.</p>"
        } else if wouldReplay > 0 {
            let expected = "REPLAY \(wouldReplay)"
            html += "<form method=\"post\" action=\"/dead-letters/replay\" class=\"filters\" id=\"replay-form\">\(HTML.hidden("csrf", session.csrfToken))"
            html += Self.filterFields(fields, parked: preview.parked)
            html += HTML.hidden("expected", String(wouldReplay))
            html += HTML.hidden("selection", Self.selectionDigest(preview.entries, preview.outcomes))
            html += "<label>Rate (per second, at most \(OverviewFigures.format(context.configuration.maxReplayRate)))"
            html += "<input name=\"rate\" id=\"replay-rate\" value=\"5\" size=\"6\"></label>"
            html += "<label>Type <code>\(expected)</code> to confirm<input name=\"confirm\" id=\"confirm-text\" data-expected=\"\(expected)\" autocomplete=\"off\"></label>"
            html += "<button type=\"submit\" id=\"replay-submit\">Replay \(wouldReplay)</button></form>"
        }
        return Self.document(title: "Replay preview", body: html, session: session, current: "/dead-letters")
    }

    func startReplay(_ fields: [String: String], session: ConsoleSession) -> HTTPServerResponse {
        let maxRate = context.configuration.maxReplayRate
        guard let rate = Double(fields["rate"] ?? ""), rate >= 0.1, rate <= maxRate else {
            return Self.problem("Replay", "the rate must be a number from 0.1 to \(OverviewFigures.format(maxRate)) per second",
                                session: session, current: "/dead-letters", status: 400)
        }
        let preview: (entries: [DeadLetterEntry], outcomes: [DeadLetterReplayer.Outcome], parked: Bool)
        do {
            preview = try dryRun(fields)
        } catch let problem as DeadLetterFilter.ParseProblem {
            return Self.problem("Replay", problem.message, session: session, current: "/dead-letters", status: 400)
        } catch {
            return Self.problem("Replay", "could not read the dead-letter topic: \(error)", session: session, current: "/dead-letters")
        }
        let wouldReplay = preview.outcomes.filter { if case .replayed = $0 { true } else { false } }.count
        guard fields["expected"] == String(wouldReplay), fields["selection"] == Self.selectionDigest(preview.entries, preview.outcomes) else {
            return Self.problem("Replay", "the selection changed since the preview (\(wouldReplay) entries would be replayed now, "
                                    + "not the \(fields["expected"] ?? "?") previewed): preview again",
                                session: session, current: "/dead-letters", status: 409)
        }
        guard fields["confirm"] == "REPLAY \(wouldReplay)" else {
            return Self.problem("Replay", "type REPLAY \(wouldReplay) to confirm", session: session, current: "/dead-letters", status: 400)
        }
        let job = ReplayJob(id: SessionStore.randomHex(), operatorName: session.name, rate: rate, entries: preview.entries)
        jobs.add(job)
        let replayer = replayer(session: session)
        let logger = context.logger
        let topic = preview.parked ? context.topics.parked : context.topics.deadLetters
        let criteria = Self.filterNames.compactMap { name in fields[name].flatMap { $0.isEmpty ? nil : "\(name)=\($0)" } }.joined(separator: " ")
        logger.notice("replay started", [("operator", .string(replayer.operatorName)), ("topic", .string(topic)),
                                         ("entries", .integer(Int64(preview.entries.count))), ("would_replay", .integer(Int64(wouldReplay))),
                                         ("rate", .double(rate)), ("filter", .string(criteria)), ("job", .string(job.id))])
        let chosen = preview.entries
        DispatchQueue.global().async {
            var failure: String?
            do {
                let outcomes = try replayer.replay(chosen, to: nil, ratePerSecond: rate, dryRun: false, nowMs: { Timestamps.nowMs() },
                                                   progress: { index, outcome in
                                                       job.record(index, outcome)
                                                       job.publish(ConsoleApp.event(ConsoleApp.jobJSON(job)))
                                                   })
                for (entry, outcome) in zip(chosen, outcomes) {
                    let (verdict, detail) = DeadLetterView.describe(outcome)
                    logger.notice("replay outcome", [("operator", .string(replayer.operatorName)), ("entry", .string(entry.identifier)),
                                                     ("request_id", .string(AuditEvent.safeIdentifier(entry.summary.requestID ?? "-"))),
                                                     ("result", .string(verdict)), ("detail", .string(detail)), ("job", .string(job.id))])
                }
            } catch {
                failure = "\(error)"
            }
            job.finish(failure: failure)
            job.publish(ConsoleApp.event(ConsoleApp.jobJSON(job)))
            logger.notice("replay finished", [("operator", .string(replayer.operatorName)), ("job", .string(job.id)),
                                              ("failure", .string(failure ?? "none"))])
        }
        return HTTPServerResponse(status: 303, headers: [HTTPHeader(name: "Location", value: "/dead-letters/job?id=\(job.id)")])
    }

    func jobPage(_ id: String?, session: ConsoleSession) -> HTTPServerResponse {
        guard let job = jobs.job(id) else { return Self.notFound }
        let snapshot = job.snapshot
        let done = snapshot.rows.filter { $0.verdict != "pending" }.count
        var html = "<h2>Replay by \(HTML.escape(job.operatorName)) at \(OverviewFigures.format(job.rate))/s</h2>"
        html += "<p><span id=\"job-done\">\(done)</span> of <span id=\"job-total\">\(snapshot.rows.count)</span> decided; "
        html += "<span id=\"job-state\">\(snapshot.finished ? "finished" : "running")</span> <span id=\"job-failure\" class=\"bad\">\(HTML.escape(snapshot.failure ?? ""))</span></p>"
        html += HTML.table(["Entry", "Request", "Code", "Result", "Detail"],
                           snapshot.rows.map { [$0.identifier, $0.requestID ?? "-", $0.code ?? "?", $0.verdict, $0.detail] }, id: "job-rows",
                           cellIDs: snapshot.rows.indices.map { [nil, nil, nil, "verdict-\($0)", "detail-\($0)"] })
        return Self.document(title: "Replay", body: html, session: session, current: "/dead-letters", stream: "/events/job?id=\(job.id)")
    }

    /// The progress stream of a replay job: its state now, then after each entry until it ends.
    func jobEvents(_ id: String?, once: Bool) -> HTTPServerResponse {
        guard let job = jobs.job(id) else { return Self.notFound }
        let stream = once || job.snapshot.finished ? nil : HTTPEventStream()
        let response = Self.eventStream(first: Self.jobJSON(job), stream: stream, retryMs: 1_000)
        if let stream {
            job.watch(stream)
            // Finished meanwhile: its last publish may have missed this stream.
            if job.snapshot.finished { job.publish(Self.event(Self.jobJSON(job))) }
        }
        return response
    }

    static func jobJSON(_ job: ReplayJob) -> [UInt8] {
        let snapshot = job.snapshot
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("text")
        writer.beginObject()
        writer.key("job-done"); writer.string(String(snapshot.rows.filter { $0.verdict != "pending" }.count))
        writer.key("job-state"); writer.string(snapshot.finished ? "finished" : "running")
        writer.key("job-failure"); writer.string(snapshot.failure ?? "")
        for (index, row) in snapshot.rows.enumerated() {
            writer.key("verdict-\(index)"); writer.string(row.verdict)
            writer.key("detail-\(index)"); writer.string(row.detail)
        }
        writer.endObject()
        writer.key("done"); writer.bool(snapshot.finished)
        writer.endObject()
        return writer.bytes
    }
}
