import CCurl

/// Turns a failed libcurl transfer into an `HTTPTransportError`: the kind, and above all whether
/// the request may have reached the server.
///
/// "Not sent" needs proof: libcurl never called `CURLOPT_PREREQFUNCTION` (the hook it runs when the
/// connection is ready and the request is about to be written) and `CURLINFO_PRETRANSFER_TIME_T`
/// is zero. Everything else counts as possibly sent.
enum CurlErrorClassifier {
    /// What the event thread knows about a finished transfer.
    struct Facts {
        var code: CURLcode
        /// `CURLOPT_PREREQFUNCTION` calls: 0 = never about to send, 2 = a resend we refused.
        var sendAttempts: Int
        /// `CURLINFO_PRETRANSFER_TIME_T` in microseconds (0 = the transfer never reached sending).
        var pretransferMicroseconds: Int64
        var exceededResponseLimit: Bool
        var elapsedMs: Double
        var timeoutMs: Int
        var maxResponseBytes: Int
        var detail: String
    }

    static func error(for facts: Facts) -> HTTPTransportError {
        let sent = facts.sendAttempts > 0 || facts.pretransferMicroseconds > 0
        let (kind, message) = kindAndMessage(facts, sent: sent)
        return HTTPTransportError(kind: kind, requestMayHaveBeenSent: sent, message: message, elapsedMs: facts.elapsedMs)
    }

    private static func kindAndMessage(_ facts: Facts, sent: Bool) -> (HTTPTransportError.Kind, String) {
        let detail = facts.detail
        let notSent = "The request was not sent; retrying is safe."
        let maybeApplied = "The request may have been applied: reconcile before retrying."
        if facts.exceededResponseLimit || facts.code == CURLE_FILESIZE_EXCEEDED {
            return (.responseTooLarge, "the response body is larger than maxResponseBytes (\(facts.maxResponseBytes) bytes); "
                + "raise the limit if the server legitimately sends more. \(maybeApplied)")
        }
        switch facts.code {
        case CURLE_ABORTED_BY_CALLBACK where facts.sendAttempts > 1:
            return (.connectionLost, "the connection died after the request was sent and libcurl wanted to resend it on a "
                + "new connection; refused because HTTPClient never retries. \(maybeApplied)")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            if sent {
                return (.connectionLost, "the connection broke after the request was sent, then reconnecting failed: \(detail). \(maybeApplied)")
            }
            return (.connectFailed, "could not connect: \(detail). Check the host name, port and network. \(notSent)")
        case CURLE_OPERATION_TIMEDOUT:
            if sent {
                return (.timedOut, "no complete answer within the \(facts.timeoutMs) ms budget: \(detail). \(maybeApplied)")
            }
            if facts.elapsedMs + 1 < Double(facts.timeoutMs) {
                return (.connectFailed, "the connect timeout ran out before the connection was ready: \(detail). "
                    + "Check that the server is reachable, or raise connectTimeoutMs. \(notSent)")
            }
            return (.timedOut, "the \(facts.timeoutMs) ms budget ran out before the connection was ready: \(detail). \(notSent)")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return (.tls, "TLS failed: \(detail). Check caBundlePath, the server certificate and host name, and the "
                + "client certificate. \(sent ? maybeApplied : notSent)")
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2,
             CURLE_HTTP2_STREAM, CURLE_SSL_SHUTDOWN_FAILED:
            return (.connectionLost, "the connection broke: \(detail). \(sent ? maybeApplied : notSent)")
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT, CURLE_NOT_BUILT_IN:
            return (.invalidRequest, "the request cannot be sent as given: \(detail). Fix the URL, method or headers. "
                + (sent ? maybeApplied : notSent))
        default:
            return (.other, "\(detail) (libcurl code \(facts.code.rawValue)). \(sent ? maybeApplied : notSent)")
        }
    }
}
