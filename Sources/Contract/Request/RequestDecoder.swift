/// Turns the bytes of a `provisioning.requests` message into a typed request, a rejection or a
/// dead letter (CONTRACT sections 3 and 6).
///
/// Order of checks: size, UTF-8 and JSON syntax, top-level object, `version` (absent or `null`
/// means 1; anything but the integer 1 is unknown), `request_id`; past that point every problem is a
/// rejection naming the field. Unknown members are ignored; `null` counts as absent.
public enum RequestDecoder {
    /// Decodes one message.
    public static func decode(_ bytes: [UInt8], limits: RequestLimits = RequestLimits()) -> RequestDecoding {
        guard bytes.count <= limits.maxBytes else {
            return .deadLetter(DeadLetterCause(
                code: .oversize,
                message: "the message is \(bytes.count) bytes, over the \(limits.maxBytes)-byte limit; send a smaller request"))
        }
        let document: JSONValue
        do {
            document = try JSONParser(maxDepth: limits.maxDepth, maxBytes: limits.maxBytes).parse(bytes)
        } catch {
            if error.code == .invalidUTF8 {
                return .deadLetter(DeadLetterCause(code: .invalidUTF8, message: "\(error.message) (byte \(error.offset))"))
            }
            return .deadLetter(DeadLetterCause(code: .notJSON, message: "not a JSON document: \(error.description)"))
        }
        guard case .object(let members) = document else {
            return .deadLetter(DeadLetterCause(
                code: .notAnObject, message: "the message is a JSON \(document.typeName), not an object; send a request object"))
        }
        let root = FieldReader(members)
        if let version = root.value("version"), version.int64Value != 1 {
            return .deadLetter(DeadLetterCause(
                code: .unknownVersion, message: "version is not 1, the only version this worker reads; send version 1 or upgrade the worker"))
        }
        guard let requestIDValue = root.value("request_id") else {
            return .deadLetter(DeadLetterCause(
                code: .missingRequestID, message: "request_id is missing; send a unique request_id of 1-64 [A-Za-z0-9._:-]"))
        }
        guard case .string(let requestID) = requestIDValue, Identifier.isToken(requestID) else {
            return .deadLetter(DeadLetterCause(
                code: .malformedRequestID, message: "request_id must be a string of 1-64 [A-Za-z0-9._:-]; fix the producer"))
        }
        let program = root.value("program")?.stringValue.flatMap { Identifier.isToken($0) ? $0 : nil }
        let wallet = root.value("wallet")?.stringValue.flatMap(Wallet.init(rawValue:))
        let kind: RequestKind? = {
            guard let value = root.value("kind") else { return .provision }
            return value.stringValue.flatMap(RequestKind.init(rawValue:))
        }()
        do {
            return .decoded(try decodeBody(root, requestID: requestID))
        } catch {
            return .rejected(RequestRejection(requestID: requestID, program: program, wallet: wallet, kind: kind,
                                              code: error.code, field: error.field, message: error.message))
        }
    }

    private static func decodeBody(_ root: FieldReader, requestID: String) throws(FieldError) -> ProvisioningRequest {
        let program = try root.requiredString("program")
        guard Identifier.isToken(program) else {
            throw .invalid("program", "must be 1-64 of [A-Za-z0-9._:-]; send a configured program name")
        }
        var kind = RequestKind.provision
        if let kindText = try root.string("kind") {
            guard let known = RequestKind(rawValue: kindText) else {
                throw .invalid("kind", "must be provision, payment or payment_action")
            }
            kind = known
        }
        let walletText = try root.requiredString("wallet")
        guard let wallet = Wallet(rawValue: walletText) else {
            throw FieldError(code: .walletUnsupported, field: "wallet",
                             message: "wallet must be apple_pay, google_wallet or google_pay; other wallets are not supported")
        }
        let card = try decodeCard(try root.requiredObject("card"))
        var request = ProvisioningRequest(requestID: requestID, program: program, kind: kind, wallet: wallet, card: card)
        switch kind {
        case .provision:
            switch wallet {
            case .applePay:
                guard let apple = try root.object("apple") else {
                    throw .invalid("apple", "is required for wallet apple_pay; send the PassKit certificates, nonce and nonce_signature")
                }
                request.apple = try decodeApple(apple)
            case .googleWallet, .googlePay:
                guard let google = try root.object("google") else {
                    throw .invalid("google", "is required for wallet \(wallet.rawValue); send wallet_id and device_id from Google's callback")
                }
                request.google = try decodeGoogle(google)
            }
        case .payment:
            guard let payment = try root.object("payment") else {
                throw .invalid("payment", "is required for kind payment; send transaction_reference, amount, wallet_token and narrative")
            }
            request.payment = try decodePayment(payment)
        case .paymentAction:
            guard let action = try root.object("payment_action") else {
                throw .invalid("payment_action", "is required for kind payment_action; send action, link and transaction_reference")
            }
            request.paymentAction = try decodePaymentAction(action)
        }
        request.startedAtMs = try root.timestamp("started_at")
        request.deadlineMs = try root.timestamp("deadline")
        if let reply = try root.object("reply") {
            guard let jwk = try reply.object("jwk") else {
                throw .invalid("reply.jwk", "is required when reply is present; send the backend's P-256 or X25519 public JWK")
            }
            request.reply = ReplyKey(keyType: try jwk.requiredString("kty"), curve: try jwk.requiredString("crv"),
                                     x: try jwk.requiredString("x"), y: try jwk.string("y"),
                                     keyID: try jwk.string("kid"))
        }
        return request
    }

    private static func decodeCard(_ card: FieldReader) throws(FieldError) -> CardReference {
        let id = try card.requiredString("id")
        guard Identifier.isCardID(id) else {
            throw .invalid("card.id", "must be 1-128 of [A-Za-z0-9._~:-] (not only dots); send the issuer's card identifier")
        }
        var last4: CardLast4?
        if let text = try card.string("last4") {
            guard let digits = CardLast4(text) else {
                throw .invalid("card.last4", "must be exactly 4 digits; send the last four digits of the card number")
            }
            last4 = digits
        }
        var userID: Sensitive?
        if let text = try card.string("user_id") {
            guard text.utf8.count <= 128, Identifier.hasNoControlCharacters(text) else {
                throw .invalid("card.user_id", "must be at most 128 bytes without control characters")
            }
            userID = Sensitive(text)
        }
        return CardReference(id: Sensitive(id), last4: last4, userID: userID)
    }

    private static func decodeApple(_ apple: FieldReader) throws(FieldError) -> ApplePassKitHandshake {
        let certificates = try apple.requiredStringArray("certificates")
        return ApplePassKitHandshake(
            certificates: certificates.map(Sensitive.init),
            nonce: Sensitive(try apple.requiredString("nonce")),
            nonceSignature: Sensitive(try apple.requiredString("nonce_signature")),
            deviceType: try apple.string("device_type"),
            appVersion: try apple.string("app_version"),
            productType: try apple.string("product_type"))
    }

    private static func decodeGoogle(_ google: FieldReader) throws(FieldError) -> GoogleWalletHandshake {
        GoogleWalletHandshake(
            walletID: Sensitive(try google.requiredString("wallet_id")),
            deviceID: Sensitive(try google.requiredString("device_id")),
            googleOPCRequested: try google.bool("google_opc_requested") ?? false,
            serverSessionID: try google.string("server_session_id").map(Sensitive.init))
    }

    private static func decodeAmount(_ amount: FieldReader) throws(FieldError) -> PaymentAmount {
        PaymentAmount(currency: try amount.requiredString("currency"), value: try amount.requiredInteger("value"))
    }

    private static func decodePayment(_ payment: FieldReader) throws(FieldError) -> PaymentInstruction {
        var agreement: CustomerAgreement?
        if let object = try payment.object("customer_agreement") {
            agreement = CustomerAgreement(agreementType: try object.requiredString("type"),
                                          storedCardUsage: try object.requiredString("stored_card_usage"))
        }
        return PaymentInstruction(
            transactionReference: try payment.requiredString("transaction_reference"),
            amount: try decodeAmount(try payment.requiredObject("amount")),
            walletToken: Sensitive(try payment.requiredString("wallet_token")),
            narrative: try payment.requiredString("narrative"),
            autoSettle: try payment.bool("auto_settle") ?? false,
            customerAgreement: agreement)
    }

    private static func decodePaymentAction(_ action: FieldReader) throws(FieldError) -> PaymentActionInstruction {
        let actionText = try action.requiredString("action")
        guard let kind = PaymentActionKind(rawValue: actionText) else {
            throw .invalid("payment_action.action", "must be settle, partial_settle or cancel")
        }
        return PaymentActionInstruction(
            action: kind,
            link: Sensitive(try action.requiredString("link")),
            amount: try action.object("amount").map { reader throws(FieldError) in try decodeAmount(reader) },
            transactionReference: try action.requiredString("transaction_reference"))
    }
}
