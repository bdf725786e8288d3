/// Applies CONTRACT section 9 to a decoded request for the program's issuer, before any issuer call.
///
/// Checks run cheapest first and the first failure is returned. Certificate chains are verified with
/// OpenSSL and cached by chain digest (`CertificateChainVerifier`).
public struct RequestValidator: Sendable {
    /// The policy in force.
    public var policy: ValidationPolicy
    /// The shared chain verifier and its cache.
    public let chainVerifier: CertificateChainVerifier

    /// Creates a validator.
    public init(policy: ValidationPolicy = ValidationPolicy(),
                chainVerifier: CertificateChainVerifier = CertificateChainVerifier()) {
        self.policy = policy
        self.chainVerifier = chainVerifier
    }

    /// The first rule the request breaks for `issuer`, or `nil` when it may be sent. Stateless:
    /// the single-use nonce rule needs `validate(_:issuer:nonceGuard:nowMs:)`.
    public func validate(_ request: ProvisioningRequest, issuer: IssuerKind) -> ValidationFailure? {
        do {
            try check(request, issuer: issuer)
            return nil
        } catch {
            return error
        }
    }

    /// `validate(_:issuer:)`, then, for a valid Apple Pay provisioning request, the single-use nonce
    /// rule: the nonce is recorded only when every other rule passed.
    public func validate(_ request: ProvisioningRequest, issuer: IssuerKind, nonceGuard: NonceGuard,
                         nowMs: Int64) -> ValidationFailure? {
        if let failure = validate(request, issuer: issuer) { return failure }
        guard request.kind == .provision, request.wallet == .applePay, let apple = request.apple else { return nil }
        if nonceGuard.checkAndRecord(apple.nonce, identity: RequestIdentity(request), nowMs: nowMs) == .reused {
            return ValidationFailure(code: .nonceReused, field: "apple.nonce",
                                     message: "apple.nonce was already used by another request; restart the PassKit flow for a fresh nonce")
        }
        return nil
    }

    private func fail(_ field: String, _ message: String, code: ErrorCode = .invalidRequest) -> ValidationFailure {
        ValidationFailure(code: code, field: field, message: "\(field) \(message)")
    }

    private func check(_ request: ProvisioningRequest, issuer: IssuerKind) throws(ValidationFailure) {
        switch (request.kind, issuer) {
        case (.provision, .worldpay):
            throw fail("kind", "is provision, but Worldpay programs take only payment and payment_action; use a provisioning program",
                       code: .kindUnsupported)
        case (.payment, .imprint), (.payment, .dcs), (.payment, .gnosis),
             (.paymentAction, .imprint), (.paymentAction, .dcs), (.paymentAction, .gnosis):
            throw fail("kind", "is \(request.kind.rawValue), which only Worldpay programs take; use a Worldpay program",
                       code: .kindUnsupported)
        default:
            break
        }
        if request.kind != .provision, request.wallet != .applePay {
            throw fail("wallet", "must be apple_pay for payments; other wallets are not supported", code: .walletUnsupported)
        }
        if issuer == .gnosis, request.wallet != .applePay {
            throw fail("wallet", "must be apple_pay: Gnosis Pay supports Apple Pay only", code: .walletUnsupported)
        }
        switch request.kind {
        case .provision:
            try checkProvisioning(request, issuer: issuer)
        case .payment:
            guard let payment = request.payment else { throw fail("payment", "is required for kind payment") }
            try checkPayment(payment)
        case .paymentAction:
            guard let action = request.paymentAction else {
                throw fail("payment_action", "is required for kind payment_action")
            }
            try checkPaymentAction(action)
        }
        try checkReplyKey(request)
        if request.kind == .provision, request.wallet == .applePay, let apple = request.apple {
            try checkCertificates(apple.certificates)
        }
    }

    // MARK: Provisioning

    private func checkProvisioning(_ request: ProvisioningRequest, issuer: IssuerKind) throws(ValidationFailure) {
        if issuer == .dcs {
            guard let userID = request.card.userID, !userID.isBlank else {
                throw fail("card.user_id", "is required for DCS programs (externalUserId); send the DCS user id")
            }
        }
        switch request.wallet {
        case .applePay:
            guard let apple = request.apple else { throw fail("apple", "is required for wallet apple_pay") }
            try checkStrictBase64(apple.nonce, field: "apple.nonce", what: "PassKit's nonce")
            try checkStrictBase64(apple.nonceSignature, field: "apple.nonce_signature", what: "PassKit's nonce signature")
            if issuer == .gnosis {
                guard let deviceType = apple.deviceType, deviceType == "iphone" || deviceType == "apple_watch" else {
                    throw fail("apple.device_type", "must be iphone or apple_watch for Gnosis Pay; send the provisioning target")
                }
                guard let appVersion = apple.appVersion, !appVersion.allSatisfy(\.isWhitespace),
                      appVersion.utf8.count <= 64, Identifier.hasNoControlCharacters(appVersion)
                else {
                    throw fail("apple.app_version", "is required for Gnosis Pay (at most 64 bytes); send CFBundleShortVersionString")
                }
            }
        case .googleWallet, .googlePay:
            guard let google = request.google else { throw fail("google", "is required for wallet \(request.wallet.rawValue)") }
            guard !google.walletID.isBlank else {
                throw fail("google.wallet_id", "must not be blank; send the wallet id from Google's callback, never a made-up one")
            }
            guard !google.deviceID.isBlank else {
                throw fail("google.device_id", "must not be blank; send the stable hardware id from Google's callback, never a made-up one")
            }
            if request.wallet == .googleWallet, google.googleOPCRequested {
                guard let session = google.serverSessionID, !session.isBlank else {
                    throw fail("google.server_session_id",
                               "is required when google_opc_requested is true; send Google's serverSessionId unchanged, never an invented one")
                }
            }
            if issuer == .dcs && request.wallet == .googleWallet && google.googleOPCRequested {
                // DCS's Google binding returns only the TSP opaque payment card: the Google OPC
                // Google asked for can never come back, and a device-token-only fallback is not
                // allowed. Refuse before the (side-effecting) issuer call.
                throw ValidationFailure(code: .walletUnsupported, field: "google.google_opc_requested",
                                        message: "google.google_opc_requested is true, but DCS cannot supply the Google OPC (google_provisioning_payload); this card cannot be added through Google Wallet UPP with an OPC on a DCS program")
            }
            if issuer == .dcs {
                let walletLength = google.walletID.revealed.unicodeScalars.count
                guard (2...36).contains(walletLength) else {
                    throw fail("google.wallet_id", "must be 2-36 characters for DCS (clientCustomerId)")
                }
                let deviceLength = google.deviceID.revealed.unicodeScalars.count
                guard (2...24).contains(deviceLength) else {
                    throw fail("google.device_id", "must be 2-24 characters for DCS (deviceId)")
                }
            }
        }
    }

    private func checkStrictBase64(_ value: Sensitive, field: String, what: String) throws(ValidationFailure) {
        guard let bytes = Crypto.base64Decode(value.revealed), !bytes.isEmpty else {
            throw fail(field, "must be non-empty strict base64 (A-Z a-z 0-9 + /, '=' padding, no whitespace); send \(what) base64-encoded, unmodified")
        }
    }

    private func checkCertificates(_ certificates: [Sensitive]) throws(ValidationFailure) {
        guard certificates.count == 2 else {
            let hint = certificates.count > 2 ? "do not append the root" : "send both certificates PassKit supplied"
            throw fail("apple.certificates", "must hold exactly 2 entries (leaf, intermediate), found \(certificates.count); \(hint)")
        }
        var der: [[UInt8]] = []
        for (index, certificate) in certificates.enumerated() {
            guard let bytes = Crypto.base64Decode(certificate.revealed), !bytes.isEmpty else {
                throw fail("apple.certificates[\(index)]",
                           "must be non-empty strict base64 (A-Z a-z 0-9 + /, '=' padding, no whitespace); send PassKit's certificate base64-encoded, unmodified")
            }
            der.append(bytes)
        }
        if case .invalid(let field, let message) = chainVerifier.verify(leaf: der[0], intermediate: der[1]) {
            throw ValidationFailure(code: .invalidRequest, field: field, message: message)
        }
    }

    private func checkReplyKey(_ request: ProvisioningRequest) throws(ValidationFailure) {
        guard let reply = request.reply else {
            if policy.requireEncryption, request.kind == .provision {
                throw fail("reply.jwk", "is required: the payload is encrypted to it; send the backend's P-256 (or X25519) public JWK")
            }
            return
        }
        guard reply.keyType == "EC" || reply.keyType == "OKP" else {
            throw fail("reply.jwk.kty", "must be EC (crv P-256) or OKP (crv X25519)")
        }
        guard let curve = JWKCurve(keyType: reply.keyType, curve: reply.curve) else {
            throw fail("reply.jwk.crv", reply.keyType == "EC" ? "must be P-256" : "must be X25519")
        }
        switch curve {
        case .p256:
            guard reply.y != nil else { throw fail("reply.jwk.y", "is required for an EC key; send the P-256 y coordinate") }
            do {
                _ = try reply.recipient()
            } catch {
                throw fail("reply.jwk", "is not a valid P-256 public key (x and y: unpadded base64url of 32 bytes, a point on the curve)")
            }
        case .x25519:
            guard reply.y == nil else { throw fail("reply.jwk.y", "must be absent for an OKP key (X25519 keys have only x)") }
            do {
                _ = try reply.recipient()
            } catch {
                throw fail("reply.jwk", "is not a valid X25519 public key (x: unpadded base64url of 32 bytes, not of small order)")
            }
        }
    }

    // MARK: Payments

    private func checkAmount(_ amount: PaymentAmount, field: String) throws(ValidationFailure) {
        let currency = amount.currency.utf8
        guard currency.count == 3, currency.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            throw fail("\(field).currency", "must be three uppercase letters (ISO 4217), e.g. GBP")
        }
        guard amount.value > 0 else {
            throw fail("\(field).value", "must be greater than 0 (minor units)")
        }
    }

    private static let agreementTypes: Set<String> = ["cardOnFile", "subscription", "installment", "unscheduled"]

    private func checkPayment(_ payment: PaymentInstruction) throws(ValidationFailure) {
        guard Identifier.isTransactionReference(payment.transactionReference) else {
            throw fail("payment.transaction_reference", "must be 1-64 of letters, digits and -_/!@#$%()*=.:;?[]{}~+")
        }
        try checkAmount(payment.amount, field: "payment.amount")
        let narrative = payment.narrative
        guard !narrative.allSatisfy(\.isWhitespace), narrative.count <= 24, Identifier.hasNoControlCharacters(narrative) else {
            throw fail("payment.narrative", "must be 1-24 characters without control characters (Worldpay narrative line1)")
        }
        if let agreement = payment.customerAgreement {
            guard Self.agreementTypes.contains(agreement.agreementType) else {
                throw fail("payment.customer_agreement.type", "must be cardOnFile, subscription, installment or unscheduled")
            }
            guard agreement.storedCardUsage == "first" || agreement.storedCardUsage == "subsequent" else {
                throw fail("payment.customer_agreement.stored_card_usage", "must be first or subsequent")
            }
        }
        try checkWalletToken(payment.walletToken)
    }

    /// The Apple Pay `paymentData`: `version` EC_v1 or RSA_v1, base64 `data` and `signature`, and a
    /// `header` with `publicKeyHash`, `transactionId` and the version's key field. Worldpay accepts
    /// 3-D Secure tokens only, which is this shape (EMV tokens are not accepted).
    private func checkWalletToken(_ token: Sensitive) throws(ValidationFailure) {
        let field = "payment.wallet_token"
        guard let document = try? JSONParser(maxDepth: 8, maxBytes: 32 * 1024).parse(token.revealed),
              case .object(let members) = document
        else {
            throw fail(field, "must be the Apple Pay paymentData JSON object, as a string; send paymentToken.paymentData unchanged")
        }
        guard case .string(let version)? = members["version"], version == "EC_v1" || version == "RSA_v1" else {
            throw fail("\(field).version", "must be EC_v1 or RSA_v1 (a 3-D Secure Apple Pay token)")
        }
        for key in ["data", "signature"] {
            guard case .string(let text)? = members[key], let bytes = Crypto.base64Decode(text), !bytes.isEmpty else {
                throw fail("\(field).\(key)", "must be non-empty strict base64; send the Apple Pay token unmodified")
            }
        }
        guard case .object(let header)? = members["header"] else {
            throw fail("\(field).header", "must be an object; send the Apple Pay token unmodified")
        }
        let keyField = version == "EC_v1" ? "ephemeralPublicKey" : "wrappedKey"
        for key in [keyField, "publicKeyHash"] {
            guard case .string(let text)? = header[key], let bytes = Crypto.base64Decode(text), !bytes.isEmpty else {
                throw fail("\(field).header.\(key)", "must be non-empty strict base64 for \(version); send the Apple Pay token unmodified")
            }
        }
        guard case .string(let transactionID)? = header["transactionId"], !transactionID.isEmpty else {
            throw fail("\(field).header.transactionId", "must be a non-empty string; send the Apple Pay token unmodified")
        }
    }

    private func checkPaymentAction(_ action: PaymentActionInstruction) throws(ValidationFailure) {
        guard Identifier.isTransactionReference(action.transactionReference) else {
            throw fail("payment_action.transaction_reference", "must be 1-64 of letters, digits and -_/!@#$%()*=.:;?[]{}~+")
        }
        let link = action.link.revealed
        guard link.hasPrefix("https://") || link.hasPrefix("http://"), link.utf8.count <= 2048,
              link.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw fail("payment_action.link", "must be the http(s) href from the links sealed in the authorization's payload, unmodified")
        }
        switch action.action {
        case .partialSettle:
            guard let amount = action.amount else {
                throw fail("payment_action.amount", "is required for partial_settle; send the amount to settle")
            }
            try checkAmount(amount, field: "payment_action.amount")
        case .settle, .cancel:
            guard action.amount == nil else {
                throw fail("payment_action.amount", "is only for partial_settle; remove it, or use partial_settle")
            }
        }
    }
}
