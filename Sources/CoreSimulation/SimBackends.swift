import Contract
import Issuers
import Kafka
import Pipeline
import Recovery

/// The backends of a run: they produce the provisioning requests and Worldpay payments the seed
/// draws (or a scenario's steps name), sign those of signed programs for their partition, send
/// some twice, and follow an `authorized` payment with its settle, partial settle or cancel.
/// `sent` is what the promises are judged against.
final class SimBackends: @unchecked Sendable {
    let world: SimWorld
    let cluster: SimCluster
    let issuer: SimIssuer
    let settings: SimulationSettings
    /// Every request produced, in order.
    private(set) var sent: [SimWorkload.Sent] = []
    /// The signed request messages produced (what a hostile copy copies).
    private(set) var signedSent: [KafkaOutgoingMessage] = []
    /// A scenario's requests as produced, by id (what `produceAgain` sends again).
    private var scenarioSent: [String: (message: KafkaOutgoingMessage, partition: Int32)] = [:]

    init(world: SimWorld, cluster: SimCluster, issuer: SimIssuer, settings: SimulationSettings) {
        self.world = world
        self.cluster = cluster
        self.issuer = issuer
        self.settings = settings
    }

    /// The seed's cards (`SimulationSettings.cards`), each of a program drawn among three issuers
    /// and with the behaviour its issuer follows.
    func cards() -> [(program: String, id: String)] {
        let behaviours = SimIssuer.Behaviour.allCases
        var cards: [(program: String, id: String)] = []
        for index in 0..<settings.cards {
            let program = world.pick(["sim-imprint", "sim-imprint", "sim-dcs", "sim-gnosis"])
            let card = "c\(index)"
            cards.append((program, card))
            // Most cards answer at once; the rest slowly, lose answers, or refuse.
            issuer.behaviours[card] = world.chance(0.55) ? .ok : world.pick(behaviours)
        }
        return cards
    }

    /// The seed's requests on `cards`: wallets, devices, reply routes and send times drawn.
    func requests(on cards: [(program: String, id: String)]) {
        for index in 0..<settings.requests {
            let card = world.pick(cards)
            let wallet: Wallet = if card.program == "sim-gnosis" || world.chance(settings.appleShare) {
                .applePay
            } else if card.program == "sim-imprint" && world.chance(settings.legacyShare) {
                .googlePay
            } else { .googleWallet }
            // A phone holds cards of several programs; a Google device here holds one card's.
            let device = switch wallet {
            case .applePay: "a\(world.int(0...2))"
            case .googleWallet: "d\(world.int(0...2))-\(card.id)"
            case .googlePay: "l\(world.int(0...1))-\(card.id)"
            }
            let at = world.int(1_000...SimulationRun.sendWindowMs)
            let resend = world.chance(settings.resendRate) ? world.int(0...15_000) : nil
            let route: ReplyRoute? = if world.chance(settings.replyShare) {
                ReplyRoute(topic: world.chance(0.1) ? SimulationRun.missingReplyTopic : SimulationRun.replyTopic, partition: world.chance(0.5) ? Int32(world.int(0...1)) : nil,
                           correlationID: Array("corr-r\(index)".utf8))
            } else { nil }
            world.after(at, nil, "request produced") { [self] in
                // Legacy Google Pay's wallet id is the device's, stable across attempts.
                let made = SimWorkload.request(id: "r\(index)", program: card.program, card: card.id, device: device, wallet: wallet,
                                               walletID: wallet == .googlePay ? "lw-\(device)" : "w\(index)", route: route, world: world)
                guard let made else { return cluster.violation("request r\(index): no Apple device could be made") }
                let request = made.request
                produce(made.message, SimWorkload.Sent(requestID: request.requestID, program: card.program, card: card.id, wallet: request.wallet,
                                                       device: ReconcileQuery.deviceRef(for: request) ?? "?", route: route,
                                                       handshake: HandshakeReference.of(request) ?? "?", producedAtMs: world.nowMs,
                                                       deadlineMs: world.nowMs + SimulationRun.windowMs),
                        behaviour: card.id, resend: resend)
            }
        }
    }

    /// A scenario's request: Google Wallet on program `sim-imprint`, card `card`.
    func scenarioRequest(id: String, card: String) {
        guard let made = SimWorkload.request(id: id, program: "sim-imprint", card: card, device: "d0-\(card)", wallet: .googleWallet,
                                             walletID: "w-\(id)", route: nil, world: world) else {
            return cluster.violation("request \(id) does not decode")
        }
        scenarioSent[id] = produce(made.message, SimWorkload.Sent(requestID: id, program: "sim-imprint", card: card, wallet: .googleWallet,
                                               device: ReconcileQuery.deviceRef(for: made.request) ?? "?", route: nil,
                                               handshake: HandshakeReference.of(made.request) ?? "?", producedAtMs: world.nowMs,
                                               deadlineMs: world.nowMs + SimulationRun.windowMs),
                behaviour: card, resend: nil)
    }

    /// A scenario's request `id` produced again: the same message, on the same partition.
    func produceAgain(_ id: String) {
        guard let (message, partition) = scenarioSent[id] else { return cluster.violation("scenario: no request \(id) to produce again") }
        let offset = cluster.append(message, partition: partition)
        world.note("request \(id) again at \(partition)@\(offset)")
    }

    /// Produces a request the workload made (signed for its partition when its program signs),
    /// and again `resend` ms later when drawn; `behaviour`: the card or reference whose behaviour
    /// the issuer follows (for the trace).
    @discardableResult
    private func produce(_ made: KafkaOutgoingMessage, _ request: SimWorkload.Sent, behaviour: String,
                         resend: Int64?) -> (message: KafkaOutgoingMessage, partition: Int32) {
        sent.append(request)
        let partition = cluster.partition(for: made)
        let message = SimWorkload.signed(made, program: request.program, partition: partition, settings: settings, nowMs: world.nowMs)
        if message.headers.contains(where: { $0.key == RequestSignature.header }) { signedSent.append(message) }
        let offset = cluster.append(message, partition: partition)
        let what = request.payment.map { "\($0.action?.rawValue ?? "payment") \($0.reference)" } ?? "\(request.wallet.rawValue), card \(request.card)"
        world.note("request \(request.requestID) (\(request.program) \(what): \(issuer.behaviours[behaviour].map { "\($0)" } ?? "ok")) at \(partition)@\(offset)")
        if let resend { world.after(resend, nil, "request produced again") { [self] in
            let offset = cluster.append(message, partition: partition)
            world.note("request \(request.requestID) again at \(partition)@\(offset)")
        } }
        return (message, partition)
    }

    /// Worldpay payments (`SimulationSettings.payments`), each with a transaction reference of its
    /// own and a behaviour like a card's; most are followed by a settle, partial settle or cancel
    /// once their backend holds an `authorized` final (sent through the authorization's link).
    func payments() {
        let behaviours = SimIssuer.Behaviour.allCases
        let window = WorkerConfiguration(workerID: "sim").deadlines.paymentWindowMs
        for index in 0..<settings.payments {
            let reference = "p\(index)"
            issuer.behaviours[reference] = world.chance(0.55) ? .ok : world.pick(behaviours)
            let at = world.int(1_000...SimulationRun.sendWindowMs)
            let resend = world.chance(settings.resendRate) ? world.int(0...15_000) : nil
            let route: ReplyRoute? = world.chance(settings.replyShare)
                ? ReplyRoute(topic: SimulationRun.replyTopic, partition: nil, correlationID: Array("corr-p\(index)".utf8)) : nil
            let amount = world.int(100...5_000)
            let action: PaymentActionKind? = world.chance(0.7) ? world.pick(PaymentActionKind.allCases) : nil
            let actionAfterMs = world.int(1_000...20_000)
            world.after(at, nil, "payment produced") { [self] in
                let id = "pay\(index)"
                guard let made = SimWorkload.payment(id: id, program: "sim-worldpay", reference: reference, amount: amount, route: route, world: world) else {
                    return cluster.violation("payment \(id) does not decode")
                }
                produce(made.message, SimWorkload.Sent(requestID: id, program: "sim-worldpay", card: "txn-" + reference, wallet: .applePay, device: "?",
                                                       route: route, handshake: "payment/" + reference, producedAtMs: world.nowMs,
                                                       deadlineMs: world.nowMs + window, payment: (reference, nil)),
                        behaviour: reference, resend: resend)
                guard let action else { return }
                followUp(action, paymentID: id, reference: reference, amount: action == .partialSettle ? amount / 2 : nil,
                         route: route, window: window, afterMs: actionAfterMs, looks: 0)
            }
        }
    }

    /// Sends `action` on the payment `paymentID` once its backend holds an `authorized` final
    /// (looking every `afterMs`, at most eight times; a payment not authorized is never followed up).
    private func followUp(_ action: PaymentActionKind, paymentID: String, reference: String, amount: Int64?, route: ReplyRoute?,
                          window: Int64, afterMs: Int64, looks: Int) {
        world.after(afterMs, nil, "payment action due") { [self] in
            guard let status = finalStatus(of: paymentID) else {
                if looks < 8 { followUp(action, paymentID: paymentID, reference: reference, amount: amount, route: route, window: window,
                                        afterMs: afterMs, looks: looks + 1) }
                return
            }
            guard status == .authorized else { return }
            let id = paymentID + "-" + action.rawValue
            guard let made = SimWorkload.paymentAction(id: id, program: "sim-worldpay", action: action, reference: reference, amount: amount,
                                                       route: route, world: world) else {
                return cluster.violation("payment action \(id) does not decode")
            }
            produce(made.message, SimWorkload.Sent(requestID: id, program: "sim-worldpay", card: "txn-" + reference, wallet: .applePay, device: "?",
                                                   route: route, handshake: "action/" + reference, producedAtMs: world.nowMs,
                                                   deadlineMs: world.nowMs + window, payment: (reference, action)),
                    behaviour: reference, resend: nil)
        }
    }

    /// The status of request `requestID`'s first final on any results topic, if it has one.
    private func finalStatus(of requestID: String) -> ResultStatus? {
        let key = Array(requestID.utf8)
        // Results are keyed by their request id (`ReplyRouting.messages`): only those are decoded.
        for record in cluster.records(SimulationRun.topics.results) + cluster.records(SimulationRun.replyTopic) where record.key == key {
            guard let result = try? ProvisioningResult.decode(record.value), result.requestID == requestID, result.isFinal else { continue }
            return result.status
        }
        return nil
    }
}
