import Contract
import Foundation
import HTTP
import Kafka
import Observability
import Recovery

extension ConsoleApp {
    func tracePage(_ query: String?, session: ConsoleSession) -> HTTPServerResponse {
        let q = (query ?? "").trimmingCharacters(in: .whitespaces)
        var html = "<h2>Request trace</h2><form class=\"filters\" method=\"get\" action=\"/trace\">"
        html += "<label>Request id or card_ref<input name=\"q\" id=\"trace-q\" value=\"\(HTML.escape(q))\" size=\"60\"></label>"
        html += "<button type=\"submit\" id=\"trace-submit\">Trace</button></form>"
        guard !q.isEmpty else {
            return Self.document(title: "Request trace", body: html, session: session, current: "/trace")
        }
        guard AuditEvent.safeIdentifier(q) == q else {
            return Self.problem("Request trace", "a request id is 1-64 of letters, digits and ._:@-; a card_ref is 32 lowercase hex digits, after a key id and ':' under a named pseudonym key",
                                session: session, current: "/trace", status: 400)
        }
        let tracer = RequestTracer(reader: TopicReader(properties: context.kafka, perPartitionLimit: context.configuration.traceScanLimit),
                                   topics: context.topics)
        do {
            var ids = [q]
            if Pseudonym.isValid(q) {
                ids = try tracer.requestIDs(cardRef: q)
                html += "<p id=\"card-requests\">card_ref \(HTML.escape(q)): \(ids.count) request(s)</p>"
            }
            for id in ids { html += Self.render(try tracer.trace(id)) }
        } catch {
            return Self.problem("Request trace", "could not read the topics: \(error.description)", session: session, current: "/trace")
        }
        return Self.document(title: "Request trace", body: html, session: session, current: "/trace")
    }

    private static func time(_ ms: Int64?) -> String { ms.map { RFC3339.format(milliseconds: $0) } ?? "-" }

    static func render(_ trace: RequestTrace) -> String {
        var html = "<section class=\"trace\"><h3>Request \(HTML.escape(trace.requestID))</h3>"
        if trace.truncated {
            html += "<p class=\"note\">Only the newest \(RequestTrace.rowLimit) rows of each kind are shown.</p>"
        }
        let first = trace.audit.first?.atMs
        var previous = first
        let rows = trace.audit.map { event -> [String] in
            defer { previous = event.atMs }
            let sinceStart = first.map { "+\(event.atMs - $0) ms" } ?? "-"
            let step = previous.map { "\(event.atMs - $0) ms" } ?? "-"
            var facts: [String] = []
            if let status = event.status { facts.append("status \(status.rawValue)") }
            if let code = event.code { facts.append("code \(code.rawValue)") }
            if let http = event.httpStatus { facts.append("HTTP \(http)") }
            if let latency = event.latencyMs { facts.append("latency \(latency) ms") }
            if let attempt = event.attempt { facts.append("attempt \(attempt)") }
            if let who = event.operator { facts.append("operator \(who)") }
            if let reason = event.reason { facts.append(reason.text) }
            return [time(event.atMs), sinceStart, step, event.stage.rawValue, event.worker ?? "-", facts.joined(separator: "; ")]
        }
        html += "<h4>Audit timeline</h4>" + HTML.table(["At", "Since first", "Step", "Stage", "Worker", "Facts"], rows, id: "timeline-\(trace.requestID)")
        html += "<h4>Results</h4>" + HTML.table(["Published", "Status", "Final", "Code", "Next action", "Attempt", "HTTP", "Record"],
                                                 trace.results.map { [time($0.publishedAtMs), $0.status, $0.isFinal ? "yes" : "no", $0.code ?? "-",
                                                                      $0.nextAction, String($0.attempt), $0.httpStatus.map(String.init) ?? "-", $0.position] },
                                                 id: "results-\(trace.requestID)")
        html += "<h4>Call markers</h4>" + HTML.table(["At", "State", "Worker", "Outcome", "Replay of"],
                                                      trace.markers.map { [time($0.atMs), $0.state, $0.worker, $0.outcome ?? "-", $0.replayOf ?? "-"] })
        html += "<h4>Reconciliation attempts</h4>" + HTML.table(["Attempt", "Due", "Deadline"],
                                                                 trace.reconciliations.map { [String($0.attempt), time($0.dueAtMs), time($0.deadlineMs)] })
        html += "<h4>Dead letters</h4>" + HTML.table(["Entry", "Code", "Reason", "Replayable"], trace.deadLetters.map {
            [$0.identifier, $0.provenance?.code.rawValue ?? "?", $0.provenance?.reason ?? "-", DeadLetterView.isReplayable($0, nowMs: Timestamps.nowMs()) ? "yes" : "no"]
        })
        html += "<h4>Replays</h4>" + HTML.table(["At", "Operator", "From offset"], trace.replays.map {
            [time($0.atMs), $0.operator ?? "-", $0.offset.map(String.init) ?? "-"]
        }, id: "replays-\(trace.requestID)")
        return html + "</section>"
    }
}
