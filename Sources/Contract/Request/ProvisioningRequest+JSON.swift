extension ProvisioningRequest {
    /// The request as CONTRACT section 3 JSON, for producers (backends, `produce`, the simulator's
    /// devices, `dlq replay`). This is the one place request secrets are serialized: its output is a
    /// request message and must go nowhere but the requests topic.
    public func encodedJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 2048)
        w.beginObject()
        w.key("version"); w.integer(Int64(version))
        w.key("request_id"); w.string(requestID)
        w.key("program"); w.string(program)
        w.key("kind"); w.string(kind.rawValue)
        w.key("wallet"); w.string(wallet.rawValue)
        w.key("card")
        w.beginObject()
        w.key("id"); w.string(card.id.revealed)
        if let last4 = card.last4 { w.key("last4"); w.string(last4.digits) }
        if let userID = card.userID { w.key("user_id"); w.string(userID.revealed) }
        w.endObject()
        if let apple {
            w.key("apple")
            w.beginObject()
            w.key("certificates")
            w.beginArray()
            for certificate in apple.certificates { w.string(certificate.revealed) }
            w.endArray()
            w.key("nonce"); w.string(apple.nonce.revealed)
            w.key("nonce_signature"); w.string(apple.nonceSignature.revealed)
            if let deviceType = apple.deviceType { w.key("device_type"); w.string(deviceType) }
            if let appVersion = apple.appVersion { w.key("app_version"); w.string(appVersion) }
            if let productType = apple.productType { w.key("product_type"); w.string(productType) }
            w.endObject()
        }
        if let google {
            w.key("google")
            w.beginObject()
            w.key("wallet_id"); w.string(google.walletID.revealed)
            w.key("device_id"); w.string(google.deviceID.revealed)
            w.key("google_opc_requested"); w.bool(google.googleOPCRequested)
            if let session = google.serverSessionID { w.key("server_session_id"); w.string(session.revealed) }
            w.endObject()
        }
        if let payment {
            w.key("payment")
            w.beginObject()
            w.key("transaction_reference"); w.string(payment.transactionReference)
            w.key("amount"); Self.write(payment.amount, to: &w)
            w.key("wallet_token"); w.string(payment.walletToken.revealed)
            w.key("narrative"); w.string(payment.narrative)
            w.key("auto_settle"); w.bool(payment.autoSettle)
            if let agreement = payment.customerAgreement {
                w.key("customer_agreement")
                w.beginObject()
                w.key("type"); w.string(agreement.agreementType)
                w.key("stored_card_usage"); w.string(agreement.storedCardUsage)
                w.endObject()
            }
            w.endObject()
        }
        if let paymentAction {
            w.key("payment_action")
            w.beginObject()
            w.key("action"); w.string(paymentAction.action.rawValue)
            w.key("link"); w.string(paymentAction.link.revealed)
            if let amount = paymentAction.amount { w.key("amount"); Self.write(amount, to: &w) }
            w.key("transaction_reference"); w.string(paymentAction.transactionReference)
            w.endObject()
        }
        if let startedAtMs { w.key("started_at"); w.timestamp(milliseconds: startedAtMs) }
        if let deadlineMs { w.key("deadline"); w.timestamp(milliseconds: deadlineMs) }
        if let reply {
            w.key("reply")
            w.beginObject()
            w.key("jwk")
            w.beginObject()
            w.key("kty"); w.string(reply.keyType)
            w.key("crv"); w.string(reply.curve)
            w.key("x"); w.string(reply.x)
            if let y = reply.y { w.key("y"); w.string(y) }
            if let keyID = reply.keyID { w.key("kid"); w.string(keyID) }
            w.endObject()
            w.endObject()
        }
        w.endObject()
        return w.bytes
    }

    private static func write(_ amount: PaymentAmount, to w: inout JSONWriter) {
        w.beginObject()
        w.key("currency"); w.string(amount.currency)
        w.key("value"); w.integer(amount.value)
        w.endObject()
    }
}
