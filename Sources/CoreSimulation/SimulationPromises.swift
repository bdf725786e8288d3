import Contract
import Kafka
import Recovery
import Simulator

/// The promises a schedule is judged by, from what the simulated cluster holds and what the
/// simulated issuer did (its call log and wallet tokens are the truth): a single-use handshake,
/// and a request (by its trace), reach the issuer at most once, and every call carries its
/// request's trace; every request has a final result or a dead letter (matched by identity; a
/// refused copy's letter does not count) by its deadline plus the reconciliation allowance; no two
/// different finals (an operator's replay after an exhausted `check_wallet` is judged for truth
/// instead); every first final true to the issuer (`FinalTruth`); every result on the request's
/// reply route; nothing answered to a message that failed its signature check.
enum SimulationPromises {
    /// What judging a run counted.
    struct Verdict {
        var requests = 0, calls = 0, finals = 0, identical = 0, deadLetters = 0
        /// Paths seen in the outputs (`SimulationCoverage`'s `schedule:` names).
        var paths: [String: Int] = [:]
    }

    /// Judges a run's outputs against the promises, recording each broken one in the cluster's
    /// violations (timestamped there); the counts and the paths it saw (`routed`, `route_refused`,
    /// what the issuer applied, recoveries from a previous owner's marker).
    static func judge(sent: [SimWorkload.Sent], cluster: SimCluster, issuer: SimIssuer) -> Verdict {
        var paths: [String: Int] = [:]
        var calls = 0
        let recurring = Set(sent.filter { $0.wallet == .googlePay }.map(\.handshake))
        for (handshake, count) in issuer.calls.sorted(by: { $0.key < $1.key }) {
            calls += count
            if count > 1 && !recurring.contains(handshake) { cluster.violation("handshake \(handshake) reached the issuer \(count) times") }
        }
        let requestOfTrace = Dictionary(sent.map { (SimWorkload.traceID($0.requestID), $0.requestID) }, uniquingKeysWith: { first, _ in first })
        for (trace, count) in issuer.callsPerTrace.sorted(by: { $0.key < $1.key }) {
            guard let requestID = requestOfTrace[trace] else {
                cluster.violation("\(count) issuer calls carried no trace of a request sent (trace \(trace))")
                continue
            }
            if count > 1 { cluster.violation("request \(requestID) reached the issuer \(count) times") }
        }
        var finals: [String: [(result: ProvisioningResult, atMs: Int64, replay: Bool)]] = [:]
        let routes = Dictionary(sent.map { ($0.requestID, $0.route) }, uniquingKeysWith: { first, _ in first })
        for record in cluster.records(SimulationRun.topics.results) + cluster.records(SimulationRun.replyTopic) {
            guard let result = try? ProvisioningResult.decode(record.value) else { continue }
            if result.code == .unauthenticated { cluster.violation("request \(result.requestID): a message that failed its signature check was answered") }
            if let misrouted = Self.misrouting(record, result: result, route: routes[result.requestID] ?? nil) {
                cluster.violation("request \(result.requestID): \(Self.describe(result)) \(misrouted)")
            }
            guard result.isFinal else { continue }
            if record.topic == SimulationRun.replyTopic { paths["routed", default: 0] += 1 }
            if (routes[result.requestID] ?? nil)?.topic == SimulationRun.missingReplyTopic { paths["route_refused", default: 0] += 1 }
            let replay = record.headers.contains { $0.key == DeadLetterHeader.replayOf }
            finals[result.requestID, default: []].append((result, record.timestampMs ?? 0, replay))
        }
        // A copy refused as unauthentic is dead-lettered too, and answers nothing for the original.
        let deadLettered = Set(cluster.records(SimulationRun.topics.deadLetters).compactMap { record -> String? in
            guard !record.headers.contains(where: { $0.key == DeadLetterHeader.code && $0.value == Array("unauthenticated".utf8) }),
                  let document = try? JSONParser().parse(record.value), let id = document["request_id"]?.stringValue,
                  let program = document["program"]?.stringValue else { return nil }
            return "\(program)/\(id)"
        })
        var identical = 0, finalCount = 0
        var seen = Set<String>()
        for request in sent where seen.insert(request.requestID).inserted {
            let requestID = request.requestID, deadlineMs = request.deadlineMs
            guard let answers = finals[requestID], let first = answers.first else {
                if !deadLettered.contains("\(request.program)/\(requestID)") {
                    cluster.violation("request \(requestID) has no final result and no dead letter")
                }
                continue
            }
            let untruth = Self.untruth(request, issuer: issuer)
            if let untrue = untruth(first.result) {
                cluster.violation("request \(requestID): \(Self.describe(first.result)) is untrue: \(untrue)")
            }
            finalCount += 1
            if first.atMs > deadlineMs + SimulationRun.reconcileAllowanceMs {
                cluster.violation("request \(requestID): first final at \(first.atMs - SimulationRun.epochMs), deadline \(deadlineMs - SimulationRun.epochMs)")
            }
            for answer in answers.dropFirst() {
                if Self.sameAnswer(answer.result, first.result) {
                    identical += 1
                } else if answer.replay && first.result.status == .indeterminate && first.result.nextAction == .checkWallet {
                    // By design: an operator's replay of an exhausted reconciliation answers with
                    // the truth after the `check_wallet` final (CONTRACT, dead letters and replay).
                    if let untrue = untruth(answer.result) {
                        cluster.violation("request \(requestID): the replay's \(Self.describe(answer.result)) is untrue: \(untrue)")
                    }
                } else {
                    cluster.violation("request \(requestID): two different finals: \(Self.describe(first.result)) then \(Self.describe(answer.result))")
                }
            }
        }
        // What the issuer applied, and the recoveries from a previous owner's marker.
        paths["applied-late"] = issuer.appliedLate
        for (path, count) in issuer.applied { paths["applied/\(path)"] = count }
        paths["recovered"] = cluster.records(SimulationRun.topics.markers).filter { record in
            CallMarker.decode(record.value).map { $0.state == .completed && $0.outcome == .recovered } ?? false
        }.count
        return Verdict(requests: seen.count, calls: calls, finals: finalCount, identical: identical, deadLetters: deadLettered.count, paths: paths)
    }

    /// How a final of `request` is judged: against the wallet tokens the issuer made for a
    /// provisioning, against Worldpay's payment for a payment or a payment action (`FinalTruth`).
    static func untruth(_ request: SimWorkload.Sent, issuer: SimIssuer) -> (ProvisioningResult) -> String? {
        let trace = SimWorkload.traceID(request.requestID)
        if let payment = request.payment {
            let facts = issuer.paymentFacts(reference: payment.reference, trace: trace)
            return { FinalTruth.paymentContradiction($0, action: payment.action, facts: facts) }
        }
        let facts = issuer.facts(handshake: request.handshake, trace: trace, card: request.card, wallet: request.wallet, device: request.device)
        return { FinalTruth.contradiction($0, facts: facts, producedAtMs: request.producedAtMs) }
    }

    /// Why `record`, a result for a request whose headers named `route`, is not where the contract
    /// puts it: on the route's topic and partition with its correlation id echoed; a route to a
    /// topic the cluster lacks is refused, and that rejection goes to the default results topic.
    static func misrouting(_ record: KafkaMessage, result: ProvisioningResult, route: ReplyRoute?) -> String? {
        let correlation = record.headers.last { $0.key == ReplyRoute.correlationHeader }?.value
        guard let route, route.topic != SimulationRun.missingReplyTopic else {
            if record.topic != SimulationRun.topics.results { return "went to \(record.topic), not the default results topic" }
            if route != nil, result.status != .rejected || result.code != .invalidRequest {
                return "answered a reply route to a missing topic, which must be rejected invalid_request"
            }
            return nil
        }
        if record.topic != route.topic { return "went to \(record.topic), not the request's reply topic" }
        if let partition = route.partition, record.partition != partition { return "went to partition \(record.partition), not the one asked for" }
        if correlation != route.correlationID { return "does not echo the request's correlation id" }
        return nil
    }

    /// Two finals agree when status, code, next action and whether a payload came agree.
    static func sameAnswer(_ a: ProvisioningResult, _ b: ProvisioningResult) -> Bool {
        a.status == b.status && a.code == b.code && a.nextAction == b.nextAction && (a.payload == nil) == (b.payload == nil)
    }

    static func describe(_ result: ProvisioningResult) -> String {
        "\(result.status.rawValue)/\(result.code?.rawValue ?? "-")/\(result.nextAction.rawValue)/\(result.payload == nil ? "no-payload" : "payload") (attempt \(result.attempt))"
    }
}
