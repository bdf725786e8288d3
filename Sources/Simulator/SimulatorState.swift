import Contract

/// Everything the simulator remembers, behind one mutex in `SimulatorEngine`.
///
/// Mutating methods decide an outcome and apply its state change together, so concurrent calls
/// for one card see a consistent order; payload building and answering run outside the lock.
struct SimulatorState: Sendable {
    private(set) var profile: SimulatorProfile
    private var random: SimulatorRandom
    /// Programs by credential: `issuer` + space + API key.
    private var credentials: [String: SimulatorProgram] = [:]
    /// Header names carrying bearer credentials, per issuer (usually only `Authorization`).
    private(set) var authHeaders: [IssuerKind: [String]] = [:]

    private var callIndex: [CallKey: Int] = [:]
    private(set) var calls: [SimulatorCall] = []
    /// When each call of `calls` arrived (epoch ms, in order), the newest `CallTimes.capacity`.
    private(set) var callTimes = CallTimes()
    /// The trace header of every issuer request, the newest `ReceivedTraces.capacity`.
    private(set) var traces = ReceivedTraces()
    private var usedNonces = BoundedStore<DigestKey, Bool>(capacity: 2_000_000)
    private var dapiNonces = DAPINonceWindow()
    private var flakySeen: Set<CardKey> = []
    private var tokens = BoundedStore<CardKey, [WalletTokenRecord]>(capacity: 500_000)
    private var payments = BoundedStore<PaymentKey, WorldpayPayment>(capacity: 500_000)
    private var paymentKeysByID = BoundedStore<String, PaymentKey>(capacity: 500_000)

    init(profile: SimulatorProfile) {
        self.profile = profile
        random = SimulatorRandom(seed: profile.seed)
        installPrograms()
    }

    // MARK: - Profile and credentials

    mutating func replaceProfile(_ profile: SimulatorProfile) {
        self.profile = profile
        random = SimulatorRandom(seed: profile.seed)
        installPrograms()
    }

    private mutating func installPrograms() {
        credentials.removeAll()
        authHeaders.removeAll()
        for program in profile.effectivePrograms {
            for key in program.acceptedAPIKeys { credentials["\(program.issuer.rawValue) \(key.revealed)"] = program }
            if program.issuer != .dcs {
                var headers = authHeaders[program.issuer] ?? []
                if !headers.contains(where: { $0.lowercased() == program.authHeader.lowercased() }) {
                    headers.append(program.authHeader)
                }
                authHeaders[program.issuer] = headers
            }
        }
    }

    func program(issuer: IssuerKind, apiKey: String) -> SimulatorProgram? {
        credentials["\(issuer.rawValue) \(apiKey)"]
    }

    /// Records a DCS request nonce; false when it is a replay inside the window.
    mutating func recordRequestNonce(_ nonce: String, timestampMs: Int64, windowMs: Int64, nowMs: Int64) -> Bool {
        dapiNonces.insert(nonce, timestampMs: timestampMs, windowMs: windowMs, nowMs: nowMs)
    }

    // MARK: - Calls and reset

    mutating func record(issuer: IssuerKind, cardID: String, handshake: String, atMs: Int64) {
        guard profile.recordCalls else { return }
        callTimes.append(atMs)
        let key = CallKey(issuer: issuer.rawValue, cardID: cardID, handshake: handshake)
        if let index = callIndex[key] {
            calls[index].count += 1
        } else {
            callIndex[key] = calls.count
            calls.append(SimulatorCall(issuer: issuer.rawValue, cardID: cardID, handshake: handshake, count: 1))
        }
    }

    /// Logs the trace header an issuer request arrived with (while calls are recorded).
    mutating func recordTrace(_ line: ReceivedTrace) {
        guard profile.recordCalls else { return }
        traces.append(line)
    }

    /// Forgets calls, nonces, tokens, flaky cards and payments; keeps the profile and programs and
    /// restarts the profile's random sequence (same seed, same draws).
    mutating func reset() {
        callIndex.removeAll()
        calls.removeAll()
        callTimes = CallTimes()
        traces = ReceivedTraces()
        usedNonces.removeAll()
        dapiNonces.removeAll()
        flakySeen.removeAll()
        tokens.removeAll()
        payments.removeAll()
        paymentKeysByID.removeAll()
        random = SimulatorRandom(seed: profile.seed)
    }

    // MARK: - Delays

    /// The delay for an answer about a card with `magic` at `issuer`: N for `-slow-N`, a profile
    /// draw for cards without a suffix, none otherwise.
    mutating func delay(for magic: MagicBehaviour, issuer: IssuerKind) -> Int {
        switch magic {
        case .slow(let milliseconds): return milliseconds
        case .none: return profile.rule(for: issuer).drawLatencyMilliseconds(&random)
        default: return 0
        }
    }

    private mutating func randomHex(_ digits: Int) -> String {
        var text = ""
        while text.count < digits {
            let word = random.next()
            let chunk = String(word, radix: 16)
            text += String(repeating: "0", count: 16 - chunk.count) + chunk
        }
        return String(text.prefix(digits))
    }

    // MARK: - Provisioning

    /// Decides a provisioning call and applies it (token created, nonce consumed) when it succeeds
    /// or times out after applying. Returns the outcome and the delay before answering.
    mutating func decide(_ call: ProvisioningCall, nowMs: Int64) -> (ProvisioningOutcome, delayMs: Int) {
        let delayMs = delay(for: call.magic, issuer: call.card.issuer)
        if call.magic == .flaky, flakySeen.insert(call.card).inserted {
            return (.unavailable, delayMs)
        }
        if let nonce = call.nonce, usedNonces[nonce] != nil {
            return (.nonceUsed, delayMs)
        }
        switch call.magic {
        case .missing, .foreign: return (.cardNotFound, delayMs)
        case .inactive: return (.cardNotActive, delayMs)
        case .provisioned: return (.alreadyProvisioned, delayMs)
        default: break
        }
        if call.deviceIneligible { return (.deviceIneligible, delayMs) }
        if call.magic == .none {
            switch profile.rule(for: call.card.issuer).drawFault(&random) {
            case .none: break
            case .hang: return (.hang, profile.hangMilliseconds)
            case .unavailable: return (.unavailable, delayMs)
            case .gatewayTimeout: return (.gatewayTimeout, delayMs)
            case .rateLimited(let seconds): return (.rateLimited(retryAfterSeconds: seconds), delayMs)
            }
        }
        let existing = tokens[call.card] ?? []
        if profile.conflictOnRepeatProvisioning,
           existing.contains(where: { $0.wallet == call.wallet && $0.deviceRef == call.deviceRef }) {
            return (.alreadyProvisioned, delayMs)
        }
        switch call.magic {
        case .timeoutUnapplied: return (.gatewayTimeout, delayMs)
        case .hang: return (.hang, profile.hangMilliseconds)
        default: break
        }
        let token = WalletTokenRecord(id: "wt_" + randomHex(24), wallet: call.wallet, deviceRef: call.deviceRef, createdAtMs: nowMs,
                                      handshake: call.handshake)
        tokens.set(existing + [token], for: call.card)
        if let nonce = call.nonce { usedNonces.set(true, for: nonce) }
        return (call.magic == .timeoutApplied ? .gatewayTimeout : .success, delayMs)
    }

    func walletTokens(for card: CardKey) -> [WalletTokenRecord] {
        tokens[card] ?? []
    }

    /// Every wallet token held, oldest first: the wallet state `GET /_sim/wallet` shows.
    var allWalletTokens: [SimulatorWalletToken] {
        tokens.values.flatMap { card, list in list.map { (card, $0) } }
            .sorted { ($0.1.createdAtMs, $0.1.id) < ($1.1.createdAtMs, $1.1.id) }
            .map { card, token in
                SimulatorWalletToken(issuer: card.issuer.rawValue, cardID: card.cardID, wallet: token.wallet, deviceRef: token.deviceRef,
                                     handshake: token.handshake, createdAtMs: token.createdAtMs)
            }
    }

    // MARK: - Payments

    /// Decides a Worldpay authorization and records the payment when it is authorized or refused
    /// (also for `-timeout-applied`, which then answers 504).
    mutating func decidePayment(program: String, reference: String, magic: MagicBehaviour, currency: String, amount: Int64,
                                autoSettle: Bool, lastFour: String) -> (PaymentOutcome, delayMs: Int) {
        let delayMs = delay(for: magic, issuer: .worldpay)
        let key = PaymentKey(program: program, reference: reference)
        if magic == .flaky, flakySeen.insert(CardKey(issuer: .worldpay, program: program, cardID: reference)).inserted {
            return (.unavailable, delayMs)
        }
        if payments[key] != nil { return (.duplicate, delayMs) }
        if magic == .none {
            switch profile.rule(for: .worldpay).drawFault(&random) {
            case .none: break
            case .hang: return (.hang, profile.hangMilliseconds)
            case .unavailable: return (.unavailable, delayMs)
            case .gatewayTimeout: return (.gatewayTimeout, delayMs)
            case .rateLimited(let seconds): return (.rateLimited(retryAfterSeconds: seconds), delayMs)
            }
        }
        switch magic {
        case .timeoutUnapplied: return (.gatewayTimeout, delayMs)
        case .hang: return (.hang, profile.hangMilliseconds)
        default: break
        }
        let refused = magic == .refused
        var payment = WorldpayPayment(id: "pay_" + randomHex(24), program: program, reference: reference, currency: currency,
                                      amount: amount, state: refused ? .refused : .authorized, lastFour: lastFour)
        if !refused, autoSettle {
            payment.state = .settled
            payment.settledAmount = amount
        }
        payments.set(payment, for: key)
        paymentKeysByID.set(key, for: payment.id)
        if magic == .timeoutApplied { return (.gatewayTimeout, delayMs) }
        return (refused ? .refused(payment) : .authorized(payment), delayMs)
    }

    func payment(program: String, reference: String) -> WorldpayPayment? {
        payments[PaymentKey(program: program, reference: reference)]
    }

    func payment(id: String, program: String) -> WorldpayPayment? {
        guard let key = paymentKeysByID[id], key.program == program else { return nil }
        return payments[key]
    }

    /// Settles, partially settles or cancels; `value` is the partial amount.
    mutating func apply(_ action: PaymentAction, paymentID: String, program: String,
                        value: (currency: String, amount: Int64)?) -> PaymentActionOutcome {
        guard let key = paymentKeysByID[paymentID], key.program == program, var payment = payments[key] else {
            return .notFound
        }
        switch (action, payment.state) {
        case (.settle, .authorized), (.settle, .partiallySettled):
            payment.settledAmount = payment.amount
            payment.state = .settled
        case (.partialSettle, .authorized), (.partialSettle, .partiallySettled):
            guard let value else { return .amountTooHigh(remaining: payment.amount - payment.settledAmount) }
            guard value.currency == payment.currency else { return .currencyMismatch(expected: payment.currency) }
            let remaining = payment.amount - payment.settledAmount
            guard value.amount <= remaining else { return .amountTooHigh(remaining: remaining) }
            payment.settledAmount += value.amount
            payment.state = payment.settledAmount == payment.amount ? .settled : .partiallySettled
        case (.cancel, .authorized):
            payment.state = .cancelled
        default:
            return .conflict(payment.state)
        }
        payments.set(payment, for: key)
        return .done(payment)
    }
}
