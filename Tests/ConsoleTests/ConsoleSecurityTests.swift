@testable import Console
import Contract
import HTTP
import Observability
import Pipeline
import Testing

/// Token hashing, sessions, CSRF and role checks of the console, without Kafka (every refusal
/// happens before a page reads anything).
@Suite("Console: tokens, sessions, CSRF, roles", .timeLimit(.minutes(5)))
struct ConsoleSecurityTests {
    static let iterations = TokenHash.minimumIterations

    @Test("a token hash verifies its token only, and its stored form reads back")
    func tokenHashing() throws {
        let hash = TokenHash(token: "correct-horse-battery-staple", iterations: Self.iterations)
        #expect(hash.matches("correct-horse-battery-staple"))
        #expect(!hash.matches("correct-horse-battery-stapl"))
        #expect(!hash.matches(""))
        let stored = hash.description
        #expect(stored.hasPrefix("pbkdf2-sha256$\(Self.iterations)$"))
        #expect(!stored.contains("correct-horse"))
        let read = try #require(TokenHash(stored: stored))
        #expect(read == hash && read.matches("correct-horse-battery-staple"))
        // Fresh salt each time: the same token hashes differently.
        #expect(TokenHash(token: "correct-horse-battery-staple", iterations: Self.iterations).description != stored)
        for bad in ["", "sha256$1$a$b", "pbkdf2-sha256$100$\(Crypto.base64Encode(hash.salt))$\(Crypto.base64Encode(hash.hash))",
                    "pbkdf2-sha256$\(Self.iterations)$\(Crypto.base64Encode([1, 2]))$\(Crypto.base64Encode(hash.hash))",
                    "pbkdf2-sha256$\(Self.iterations)$\(Crypto.base64Encode(hash.salt))$\(Crypto.base64Encode([1, 2, 3]))"] {
            #expect(TokenHash(stored: bad) == nil, "\(bad)")
        }
        // RFC 7914 section 11 / RFC 6070-style vector for PBKDF2-HMAC-SHA256 ("passwd", "salt", 1 iteration, first 32 bytes).
        let derived = TokenHash.derive(token: "passwd", salt: Array("salt".utf8), iterations: 1)
        #expect(derived.map { String(format: "%02x", $0) }.joined() == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc")
    }

    @Test("the token book finds the entry a token belongs to, and nothing for others")
    func tokenBook() {
        let book = TokenBook([
            ConsoleToken(name: "alice", role: .replayer, hash: TokenHash(token: "alice-token-0123456789", iterations: Self.iterations)),
            ConsoleToken(name: "victor", role: .viewer, hash: TokenHash(token: "victor-token-0123456789", iterations: Self.iterations)),
        ])
        #expect(book.authenticate("alice-token-0123456789")?.name == "alice")
        #expect(book.authenticate("victor-token-0123456789")?.role == .viewer)
        #expect(book.authenticate("mallory-token-0123456789") == nil)
        #expect(book.authenticate("") == nil)
    }

    @Test("sessions: random ids, their own CSRF tokens, expiry, logout and a bound on their number")
    func sessions() {
        let store = SessionStore(lifetimeMs: 1_000, capacity: 3)
        let token = ConsoleToken(name: "alice", role: .replayer, hash: TokenHash(token: "alice-token-0123456789", iterations: Self.iterations))
        let (first, session) = store.create(for: token, nowMs: 10_000)
        #expect(first.count == 64 && session.csrfToken.count == 64 && first != session.csrfToken)
        #expect(store.session(first, nowMs: 10_500)?.name == "alice")
        #expect(store.session(first, nowMs: 11_000) == nil, "expired at its lifetime")
        let (second, live) = store.create(for: token, nowMs: 20_000)
        #expect(second != first)
        #expect(SessionStore.csrfMatches(live.csrfToken, session: live))
        #expect(!SessionStore.csrfMatches(session.csrfToken, session: live), "another session's CSRF token")
        #expect(!SessionStore.csrfMatches(nil, session: live) && !SessionStore.csrfMatches("", session: live))
        store.end(second)
        #expect(store.session(second, nowMs: 20_001) == nil)
        let ids = (0..<5).map { store.create(for: token, nowMs: 30_000 + Int64($0)).id }
        #expect(store.count(nowMs: 30_010) == 3)
        #expect(store.session(ids[0], nowMs: 30_010) == nil && store.session(ids[4], nowMs: 30_010) != nil)
        #expect(store.session("not-a-session", nowMs: 30_010) == nil)
    }

    @Test("configuration: tokens need a safe name, a role and a stored hash; unknown keys are refused")
    func configuration() throws {
        let hash = TokenHash(token: "alice-token-0123456789", iterations: Self.iterations).description
        let good = try ConsoleConfiguration.parse(json: """
            {"console": {"listen": "127.0.0.1:0", "metrics": ["http://127.0.0.1:9464/metrics"],
             "tokens": [{"name": "alice", "role": "replayer", "hash": "\(hash)"}]}}
            """)
        #expect(good.tokens.first?.name == "alice" && good.listen.port == 0 && good.metricsEndpoints.count == 1)
        #expect(ConsoleConfiguration().listen.host == "127.0.0.1", "loopback unless told otherwise")
        let bad: [(String, String)] = [
            ("{}", "console"),
            ("{\"console\": {\"tokens\": []}}", "console.tokens"),
            ("{\"console\": {\"tokens\": [{\"name\": \"a b\", \"role\": \"viewer\", \"hash\": \"\(hash)\"}]}}", "console.tokens[0].name"),
            ("{\"console\": {\"tokens\": [{\"name\": \"a\", \"role\": \"admin\", \"hash\": \"\(hash)\"}]}}", "console.tokens[0].role"),
            ("{\"console\": {\"tokens\": [{\"name\": \"a\", \"role\": \"viewer\", \"hash\": \"plain-token\"}]}}", "console.tokens[0].hash"),
            ("{\"console\": {\"listen\": \"nowhere\", \"tokens\": []}}", "console.listen"),
            ("{\"console\": {\"metrics\": [\"ftp://x\"], \"tokens\": []}}", "console.metrics"),
            ("{\"console\": {\"colour\": \"blue\"}}", "console.colour"),
        ]
        for (text, keyPath) in bad {
            #expect(throws: ConsoleConfiguration.Problem.self, "\(text)") { try ConsoleConfiguration.parse(json: text) }
            do { _ = try ConsoleConfiguration.parse(json: text) } catch { #expect(error.keyPath == keyPath, "\(text)") }
        }
    }

    @Test("refusals: no session, a forged login, a wrong token, a missing CSRF token, a viewer replaying; all without detail")
    func refusals() throws {
        let rig = AppRig()
        defer { rig.stop() }
        let app = rig.app
        // No session: pages redirect to the login, streams and posts are 401.
        #expect(app.route(HTTPServerRequest(method: "GET", path: "/")).status == 303)
        #expect(app.route(HTTPServerRequest(method: "GET", path: "/favicon.ico")).status == 401, "only pages lead to the login form")
        #expect(app.route(HTTPServerRequest(method: "GET", path: "/events/overview")).status == 401)
        #expect(app.route(HTTPServerRequest(method: "POST", path: "/dead-letters/replay")).status == 401)
        // The login form's anti-forgery value must match its cookie.
        let form = app.route(HTTPServerRequest(method: "GET", path: "/login"))
        let loginCookie = try #require(AppRig.cookie(form, ConsoleApp.loginCookie))
        #expect(app.route(rig.loginRequest(token: AppRig.aliceToken, cookie: "0000", field: loginCookie)).status == 403)
        var wrongRequest = rig.loginRequest(token: "mallory-token-0123456789", cookie: loginCookie, field: loginCookie)
        wrongRequest.peer = "203.0.113.7"
        let wrong = app.route(wrongRequest)
        #expect(wrong.status == 401)
        #expect(rig.logs.renderedLines.contains { $0.contains("unknown token") && $0.contains("203.0.113.7") }, "a failed sign-in logs its peer")
        #expect(!String(decoding: wrong.body, as: UTF8.self).contains("alice"), "a refusal names no token")
        // A good login (a new form: each nonce is used once): the session cookie's attributes.
        let again = try #require(AppRig.cookie(app.route(HTTPServerRequest(method: "GET", path: "/login")), ConsoleApp.loginCookie))
        let ok = app.route(rig.loginRequest(token: AppRig.viewerToken, cookie: again, field: again))
        #expect(ok.status == 303)
        let setCookie = try #require(ok.headers.first { $0.name == "Set-Cookie" && $0.value.hasPrefix("__Host-console_session=") }?.value)
        for attribute in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/"] { #expect(setCookie.contains(attribute), "\(attribute)") }
        let session = try #require(AppRig.cookie(ok, SessionStore.cookieName))
        let state = try #require(app.sessions.session(session, nowMs: Timestamps.nowMs()))
        let headers = [HTTPHeader(name: "Cookie", value: "__Host-console_session=\(session)")]
        // Missing or wrong CSRF token: 403, whatever the role.
        for body in ["", "csrf=", "csrf=\(String(repeating: "0", count: 64))"] {
            let refused = app.route(HTTPServerRequest(method: "POST", path: "/dead-letters/preview", headers: headers, body: Array(body.utf8)))
            #expect(refused.status == 403 && String(decoding: refused.body, as: UTF8.self) == "forbidden", "\(body)")
        }
        // A viewer with the right CSRF token still cannot replay.
        let replay = app.route(HTTPServerRequest(method: "POST", path: "/dead-letters/replay", headers: headers,
                                                 body: Array("csrf=\(state.csrfToken)&rate=1&confirm=REPLAY+1&expected=1".utf8)))
        #expect(replay.status == 403 && String(decoding: replay.body, as: UTF8.self) == "forbidden")
        // Logging out needs the CSRF token and ends the session.
        #expect(app.route(HTTPServerRequest(method: "POST", path: "/logout", headers: headers, body: Array("csrf=\(state.csrfToken)".utf8))).status == 303)
        #expect(app.route(HTTPServerRequest(method: "GET", path: "/", headers: headers)).status == 303)
        let logs = rig.logs.renderedLines.joined(separator: "\n")
        #expect(logs.contains("replay needs the replayer role") && logs.contains("victor"))
        #expect(!logs.contains(AppRig.viewerToken) && !logs.contains(AppRig.aliceToken), "the log never holds a token")
    }

    /// The login form's nonce is one this console issued, used once, never one
    /// the browser already held (another port of the host shares its cookie jar); cookies are
    /// `__Host-`; sign-in attempts are throttled before any PBKDF2 round.
    @Test("login: only an issued, unused nonce signs in; the form never reuses a cookie; __Host- cookies; attempts throttled")
    func loginNoncesAndThrottle() throws {
        let rig = AppRig()
        defer { rig.stop() }
        let app = rig.app
        // A cookie and form value planted by another origin on the host, matching each other: refused.
        let planted = String(repeating: "ab", count: 32)
        #expect(app.route(rig.loginRequest(token: AppRig.aliceToken, cookie: planted, field: planted)).status == 403)
        // The login page ignores a cookie the browser already holds and issues its own.
        let form = app.route(HTTPServerRequest(method: "GET", path: "/login", headers: [HTTPHeader(name: "Cookie", value: "\(ConsoleApp.loginCookie)=\(planted)")]))
        let nonce = try #require(AppRig.cookie(form, ConsoleApp.loginCookie))
        #expect(nonce != planted && String(decoding: form.body, as: UTF8.self).contains(nonce))
        let setLogin = try #require(form.headers.first { $0.name == "Set-Cookie" && $0.value.hasPrefix("__Host-console_login=") }?.value)
        for attribute in ["Path=/;", "HttpOnly", "Secure", "SameSite=Strict"] { #expect(setLogin.contains(attribute), "\(attribute)") }
        #expect(!setLogin.contains("Domain"))
        let ok = app.route(rig.loginRequest(token: AppRig.viewerToken, cookie: nonce, field: nonce))
        #expect(ok.status == 303 && AppRig.cookie(ok, "__Host-console_session") != nil)
        // Used once: the same nonce again is refused.
        #expect(app.route(rig.loginRequest(token: AppRig.viewerToken, cookie: nonce, field: nonce)).status == 403)
        // Throttled: the burst, then 429 without checking the token (a right one included).
        var statuses: [Int] = []
        for attempt in 0..<12 {
            let page = app.route(HTTPServerRequest(method: "GET", path: "/login"))
            let fresh = try #require(AppRig.cookie(page, ConsoleApp.loginCookie))
            let token = attempt == 11 ? AppRig.aliceToken : "mallory-token-\(attempt)-0123456789"
            statuses.append(app.route(rig.loginRequest(token: token, cookie: fresh, field: fresh)).status)
        }
        // One token went to the good login above: 9 more wrong ones, then refused before the hash.
        #expect(statuses == Array(repeating: 401, count: 9) + [429, 429, 429], "\(statuses)")
        #expect(rig.logs.renderedLines.contains { $0.contains("too many sign-in attempts") })
    }

    @Test("every answer over HTTP carries the security headers, and the server listens on loopback")
    func securityHeaders() async throws {
        let rig = AppRig()
        defer { rig.stop() }
        let server = try ConsoleServer(host: "127.0.0.1", port: 0, context: rig.context)
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        for path in ["/login", "/", "/static/console.js", "/events/overview", "/nowhere"] {
            let response = try await client.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(server.port)\(path)", timeoutMs: 10_000)).get()
            let csp = try #require(response.header("Content-Security-Policy"), "\(path)")
            #expect(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline") && csp.contains("frame-ancestors 'none'"))
            #expect(response.header("X-Frame-Options") == "DENY" && response.header("Cache-Control") == "no-store", "\(path)")
            #expect(response.header("X-Content-Type-Options") == "nosniff")
        }
        let page = try await client.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(server.port)/login", timeoutMs: 10_000)).get()
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(!html.contains("<script>") && html.contains("<script src=\"/static/console.js\">"), "no inline script")
    }
}
