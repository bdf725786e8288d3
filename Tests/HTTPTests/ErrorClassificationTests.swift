import CCurl
@testable import HTTP
import Testing

extension HTTPTests {
    /// libcurl result codes → kind and `requestMayHaveBeenSent`.
    @Suite(.timeLimit(.minutes(5))) struct ErrorClassification {
        private static func classify(_ code: CURLcode, attempts: Int, pretransfer: Int64 = 0, elapsedMs: Double = 10,
                                     timeoutMs: Int = 1_000, exceeded: Bool = false) -> HTTPTransportError {
            CurlErrorClassifier.error(for: .init(
                code: code, sendAttempts: attempts, pretransferMicroseconds: pretransfer, exceededResponseLimit: exceeded,
                elapsedMs: elapsedMs, timeoutMs: timeoutMs, maxResponseBytes: 1_024, detail: "detail"))
        }

        @Test(arguments: [
            (CURLE_COULDNT_RESOLVE_HOST, 0, HTTPTransportError.Kind.connectFailed, false),
            (CURLE_COULDNT_CONNECT, 0, .connectFailed, false),
            (CURLE_COULDNT_CONNECT, 1, .connectionLost, true),
            (CURLE_OPERATION_TIMEDOUT, 1, .timedOut, true),
            (CURLE_SSL_CONNECT_ERROR, 0, .tls, false),
            (CURLE_PEER_FAILED_VERIFICATION, 0, .tls, false),
            (CURLE_GOT_NOTHING, 1, .connectionLost, true),
            (CURLE_SEND_ERROR, 1, .connectionLost, true),
            (CURLE_SEND_ERROR, 0, .connectionLost, false),
            (CURLE_RECV_ERROR, 1, .connectionLost, true),
            (CURLE_PARTIAL_FILE, 1, .connectionLost, true),
            (CURLE_ABORTED_BY_CALLBACK, 2, .connectionLost, true),
            (CURLE_FILESIZE_EXCEEDED, 1, .responseTooLarge, true),
            (CURLE_URL_MALFORMAT, 0, .invalidRequest, false),
            (CURLE_UNSUPPORTED_PROTOCOL, 0, .invalidRequest, false),
            (CURLE_WEIRD_SERVER_REPLY, 1, .other, true),
        ])
        func table(code: CURLcode, attempts: Int, kind: HTTPTransportError.Kind, sent: Bool) {
            let error = Self.classify(code, attempts: attempts)
            #expect(error.kind == kind, "code \(code.rawValue)")
            #expect(error.requestMayHaveBeenSent == sent, "code \(code.rawValue)")
        }

        @Test func pretransferTimeAloneMeansMayHaveBeenSent() {
            let error = Self.classify(CURLE_RECV_ERROR, attempts: 0, pretransfer: 120)
            #expect(error.requestMayHaveBeenSent)
        }

        @Test func timeoutBeforeSendingIsConnectFailedOnlyWhenBudgetRemained() {
            let budgetSpent = Self.classify(CURLE_OPERATION_TIMEDOUT, attempts: 0, elapsedMs: 1_000.4, timeoutMs: 1_000)
            #expect(budgetSpent.kind == .timedOut)
            #expect(!budgetSpent.requestMayHaveBeenSent)
            let connectTimeout = Self.classify(CURLE_OPERATION_TIMEDOUT, attempts: 0, elapsedMs: 200, timeoutMs: 1_000)
            #expect(connectTimeout.kind == .connectFailed)
            #expect(!connectTimeout.requestMayHaveBeenSent)
        }

        @Test func ourWriteAbortIsResponseTooLarge() {
            let error = Self.classify(CURLE_WRITE_ERROR, attempts: 1, exceeded: true)
            #expect(error.kind == .responseTooLarge)
            #expect(error.message.contains("1024"))
        }
    }
}
