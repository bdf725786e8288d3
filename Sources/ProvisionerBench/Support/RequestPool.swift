import Contract
import Harness

/// Requests prepared before a measured phase (so generating them costs the phase nothing): a mix
/// of Apple Pay (real PassKit chains, single-use nonces) and Google requests over the demo programs.
struct RequestPool {
    /// One prepared request.
    struct Item {
        let requestID: String
        let key: [UInt8]
        let value: [UInt8]
        let program: String
    }

    /// What to generate.
    enum Mix {
        /// Imprint Apple Pay and Google Wallet, half and half.
        case imprint
        /// Every provisioning issuer: Imprint, DCS, Gnosis Pay, Apple and Google.
        case allIssuers
        /// Apple Pay only, on one program.
        case applePay(program: String)
        /// Google Wallet (no OPC), on one program.
        case googleWallet(program: String)
    }

    /// Makes `count` requests of `mix`, with `startedAtMs` left to the record timestamp (the window
    /// starts when the request is produced).
    static func make(_ count: Int, mix: Mix, factory: RequestFactory, cardPrefix: String = "pm") throws -> [Item] {
        var items: [Item] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            let card = "\(cardPrefix)_\(index)_\(Crypto.hex(Crypto.randomBytes(3)))"
            let (program, wallet): (String, Wallet) = switch mix {
            case .imprint: ("demo-imprint", index % 2 == 0 ? .applePay : .googleWallet)
            case .allIssuers:
                [("demo-imprint", Wallet.applePay), ("demo-imprint", .googleWallet), ("demo-dcs", .applePay),
                 ("demo-dcs", .googleWallet), ("demo-gnosis", .applePay)][index % 5]
            case .applePay(let program): (program, .applePay)
            case .googleWallet(let program): (program, .googleWallet)
            }
            let request = try factory.provision(program: program, wallet: wallet, cardID: card, startedAtMs: nil,
                                                opcRequested: program == "demo-imprint", omitStartedAt: true)
            items.append(Item(requestID: request.requestID, key: request.key ?? [], value: request.value, program: program))
        }
        return items
    }
}
