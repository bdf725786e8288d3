import Contract
import HTTP
@testable import Issuers
import Testing

/// The client's small rules that need no server: transport mapping, Retry-After, origins.
@Suite(.timeLimit(.minutes(5))) struct ClientRuleTests {
    private func error(_ kind: HTTPTransportError.Kind, sent: Bool) -> HTTPTransportError {
        HTTPTransportError(kind: kind, requestMayHaveBeenSent: sent, message: "m", elapsedMs: 1)
    }

    @Test func transportFailuresByWhatTheIssuerMayHaveSeen() {
        #expect(IssuerClient.transportFailure(for: error(.connectFailed, sent: false), deadlineBound: false) == .notSent)
        #expect(IssuerClient.transportFailure(for: error(.timedOut, sent: false), deadlineBound: false) == .notSent)
        #expect(IssuerClient.transportFailure(for: error(.timedOut, sent: false), deadlineBound: true) == .abandonedBeforeSend)
        #expect(IssuerClient.transportFailure(for: error(.timedOut, sent: true), deadlineBound: true) == .timedOutAfterSend)
        #expect(IssuerClient.transportFailure(for: error(.connectionLost, sent: true), deadlineBound: false) == .connectionLostAfterSend)
        #expect(IssuerClient.transportFailure(for: error(.responseTooLarge, sent: true), deadlineBound: false) == .connectionLostAfterSend)
        #expect(IssuerClient.transportFailure(for: error(.tls, sent: false), deadlineBound: false) == .notSent)
    }

    @Test func retryAfterForms() {
        #expect(RetryAfter.milliseconds("3", nowMs: 0) == 3_000)
        #expect(RetryAfter.milliseconds(" 0 ", nowMs: 0) == 0)
        let now = RFC3339.parse("1994-11-06T08:49:30.000Z") ?? 0
        #expect(RetryAfter.milliseconds("Sun, 06 Nov 1994 08:49:37 GMT", nowMs: now) == 7_000)
        #expect(RetryAfter.milliseconds("Sun, 06 Nov 1994 08:49:37 GMT", nowMs: now + 60_000) == 0)
        #expect(RetryAfter.milliseconds("soon", nowMs: 0) == nil)
        #expect(RetryAfter.milliseconds("-1", nowMs: 0) == nil)
        #expect(RetryAfter.milliseconds("1.5", nowMs: 0) == nil)
    }

    @Test func origins() {
        #expect(URLOrigin("https://A.example/x") == URLOrigin("https://a.example:443/y"))
        #expect(URLOrigin("http://[::1]:8080/x")?.host == "[::1]")
        #expect(URLOrigin("http://[::1]:8080/x")?.port == 8080)
        #expect(URLOrigin("http://a.example:0/") == nil)
        #expect(URLOrigin("http://a.example:99999/") == nil)
        #expect(URLOrigin("http://:80/") == nil)
        #expect(URLOrigin("ftp://a.example/") == nil)
    }
}
