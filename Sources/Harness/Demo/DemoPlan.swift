import Contract
import Observability

/// What one demo request must end in.
public enum DemoExpectation: Sendable, Equatable {
    /// A final result with this status (and code, when given).
    case final(ResultStatus, ErrorCode?)
    /// A dead letter with this `dlq.code`.
    case deadLetter(String)
    /// No result of its own: a copy of an earlier request, ignored as a duplicate.
    case duplicate

    /// Human-readable form for the summary.
    public var description: String {
        switch self {
        case .final(let status, let code): code.map { "\(status.rawValue)/\($0.rawValue)" } ?? status.rawValue
        case .deadLetter(let code): "dead letter \(code)"
        case .duplicate: "duplicate ignored"
        }
    }
}

/// One demo request: what is sent, why, and what must come back.
public struct DemoCase: Sendable {
    /// Short label shown in the summary (`imprint apple_pay -timeout-applied`).
    public var label: String
    /// The request (or bad input) to produce.
    public var request: GeneratedRequest
    /// What it must end in.
    public var expectation: DemoExpectation
}

/// The demo's mix: every wallet on every issuer, each magic failure card, expired, invalid,
/// duplicate, nonce-reuse and undecodable messages, and Worldpay payments.
public enum DemoPlan {
    /// Builds `total` requests (at least the fixed special cases), spread over the four programs.
    public static func make(total: Int, factory: RequestFactory) throws -> [DemoCase] {
        var cases: [DemoCase] = []
        func add(_ label: String, _ request: GeneratedRequest, _ expectation: DemoExpectation) {
            cases.append(DemoCase(label: label, request: request, expectation: expectation))
        }
        let now = Timestamps.nowMs()
        func card(_ suffix: String = "") -> String { "pm_" + Crypto.hex(Crypto.randomBytes(4)) + suffix }

        // Magic cards: every documented failure, once.
        add("imprint apple_pay card -missing", try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card("-missing")), .final(.rejected, .cardNotFound))
        add("imprint apple_pay card -foreign", try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card("-foreign")), .final(.rejected, .cardNotFound))
        add("dcs apple_pay card -inactive", try factory.provision(program: "demo-dcs", wallet: .applePay, cardID: card("-inactive")), .final(.rejected, .cardNotActive))
        add("imprint google_wallet card -provisioned", try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card("-provisioned")), .final(.alreadyProvisioned, nil))
        add("gnosis apple_pay card -slow-300", try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: card("-slow-300")), .final(.provisioned, nil))
        add("imprint apple_pay 504 after applying", try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card("-timeout-applied")), .final(.provisioned, nil))
        add("imprint google_wallet 504 not applied", try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card("-timeout-unapplied")), .final(.notProvisioned, .issuerTimeout))
        add("imprint apple_pay issuer hangs (4 s deadline)", try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card("-hang"), deadlineMs: now + 4_000), .final(.notProvisioned, .issuerTimeout))
        add("dcs google_wallet 504 (no state API)", try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card("-timeout-applied"), opcRequested: false), .final(.indeterminate, .issuerTimeout))
        add("dcs google_wallet with a Google OPC requested", try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card()), .final(.rejected, .walletUnsupported))
        add("imprint google_pay card -flaky (one retry)", try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card("-flaky")), .final(.provisioned, nil))
        add("imprint google_wallet device -ineligible", try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card(), deviceSuffix: "-ineligible"), .final(.rejected, .deviceIneligible))

        // Payments through Worldpay.
        add("worldpay payment refused", factory.payment(program: "demo-worldpay", transactionReference: "demo-\(Crypto.hex(Crypto.randomBytes(3)))-refused"), .final(.refused, .paymentRefused))
        add("worldpay payment 504 after authorizing", factory.payment(program: "demo-worldpay", transactionReference: "demo-\(Crypto.hex(Crypto.randomBytes(3)))-timeout-applied"), .final(.authorized, nil))

        // Answered without calling the issuer.
        add("apple_pay handshake 30 s old (expired)", try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(), startedAtMs: now - 30_000), .final(.expired, .deadlineExceeded))
        add("gnosis asked for google_wallet", try factory.provision(program: "demo-gnosis", wallet: .googleWallet, cardID: card()), .final(.rejected, .walletUnsupported))
        add("unknown program", try factory.provision(program: "demo-unknown", wallet: .googlePay, cardID: card()), .final(.rejected, .unknownProgram))
        var broken = try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card())
        broken.value = Array(String(decoding: broken.value, as: UTF8.self).replacingOccurrences(of: "\"nonce\":\"", with: "\"nonce\":\"not base64 at all!").utf8)
        add("apple_pay nonce not base64", broken, .final(.rejected, .invalidRequest))

        // Nonce reuse and duplicates: same card, so the copies follow their original in order.
        let reusedCard = card()
        let original = try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: reusedCard)
        add("apple_pay original of a reused nonce", original, .final(.provisioned, nil))
        var reuse = original
        reuse.requestID = factory.requestID("reuse")
        reuse.value = Array(String(decoding: original.value, as: UTF8.self).replacingOccurrences(of: original.requestID, with: reuse.requestID).utf8)
        add("apple_pay nonce reused by a new request", reuse, .final(.rejected, .nonceReused))
        let twice = try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(), opcRequested: false)
        add("google_wallet sent twice (first copy)", twice, .final(.provisioned, nil))
        add("google_wallet sent twice (second copy)", twice, .duplicate)

        // Undecodable: dead letters.
        add("not JSON", GeneratedRequest(requestID: "", program: "-", kind: .provision, wallet: .applePay, key: Array("poison".utf8),
                                         value: Array("this is not a provisioning request".utf8)), .deadLetter("not_json"))
        add("unknown version 2", GeneratedRequest(requestID: "", program: "demo-imprint", kind: .provision, wallet: .googlePay, key: nil,
                                                  value: Array(#"{"version":2,"request_id":"v2-demo","program":"demo-imprint"}"#.utf8)), .deadLetter("unknown_version"))
        add("no request_id", GeneratedRequest(requestID: "", program: "demo-imprint", kind: .provision, wallet: .googlePay, key: nil,
                                              value: Array(#"{"version":1,"program":"demo-imprint","wallet":"google_pay"}"#.utf8)), .deadLetter("missing_request_id"))

        // The bulk: successes over every issuer and wallet.
        let mix: [(String, Wallet, String)] = [
            ("demo-imprint", .applePay, "imprint apple_pay"), ("demo-imprint", .googleWallet, "imprint google_wallet"),
            ("demo-imprint", .googlePay, "imprint google_pay"), ("demo-dcs", .applePay, "dcs apple_pay"),
            ("demo-dcs", .googleWallet, "dcs google_wallet"), ("demo-gnosis", .applePay, "gnosis apple_pay"),
            ("demo-worldpay", .applePay, "worldpay payment"),
        ]
        var index = 0
        while cases.count < total {
            let (program, wallet, label) = mix[index % mix.count]
            if program == "demo-worldpay" {
                add(label, factory.payment(program: program, transactionReference: "demo-\(Crypto.hex(Crypto.randomBytes(4)))",
                                           subscription: index % 3 == 0), .final(.authorized, nil))
            } else {
                add(label, try factory.provision(program: program, wallet: wallet, cardID: card(), opcRequested: program != "demo-dcs" && index % 2 == 0,
                                                 deviceType: index % 5 == 0 ? "apple_watch" : "iphone"), .final(.provisioned, nil))
            }
            index += 1
        }
        return cases
    }
}
