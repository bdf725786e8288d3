import Contract
import Dispatch
import HTTP
import Kafka
import Observability
import Recovery
import Synchronization

/// Routes console requests: login, the pages, the event streams and replays; checks the session,
/// the role and the CSRF token; adds the security headers to every answer.
///
/// Refusals say only `401 unauthorized` or `403 forbidden`. Pages are rendered on the server
/// from values the CLI would print (redacted dead letters, audit facts, metric figures); the
/// browser receives nothing else.
public final class ConsoleApp: Sendable {
    let context: ConsoleContext
    /// Live sessions.
    public let sessions: SessionStore
    let tokens: TokenBook
    let jobs = ReplayJobs()
    /// Login nonces and the sign-in throttle.
    let loginGuard = LoginGuard()
    /// Open Overview streams and the session each belongs to.
    let overviewStreams = Mutex<[(stream: HTTPEventStream, session: String)]>([])

    /// The cookie holding the login form's anti-forgery nonce (before a session exists).
    static let loginCookie = "__Host-console_login"

    /// Creates the application for `context`.
    public init(context: ConsoleContext) {
        self.context = context
        self.sessions = SessionStore(lifetimeMs: context.configuration.sessionLifetimeMs)
        self.tokens = TokenBook(context.configuration.tokens)
        context.monitor.observe { [weak self] in self?.publishOverview() }
    }

    /// Headers on every answer: a strict Content-Security-Policy (no inline script or style), no
    /// framing, no sniffing, no referrer, no caching.
    static let securityHeaders: [HTTPHeader] = [
        HTTPHeader(name: "Content-Security-Policy",
                   value: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
                       + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        HTTPHeader(name: "X-Frame-Options", value: "DENY"),
        HTTPHeader(name: "X-Content-Type-Options", value: "nosniff"),
        HTTPHeader(name: "Referrer-Policy", value: "no-referrer"),
        HTTPHeader(name: "Cache-Control", value: "no-store"),
        HTTPHeader(name: "Cross-Origin-Opener-Policy", value: "same-origin"),
        HTTPHeader(name: "Cross-Origin-Resource-Policy", value: "same-origin"),
    ]

    /// Answers `request` (on a worker queue; may block on Kafka reads).
    func handle(_ request: HTTPServerRequest, responder: HTTPResponder) {
        var response = route(request)
        response.headers += Self.securityHeaders
        responder.respond(response)
    }

    /// The answer to `request` before the security headers (tests call this directly too).
    public func route(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let now = Timestamps.nowMs()
        switch (request.method, request.path) {
        case ("GET", "/static/console.css"):
            return HTTPServerResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/css; charset=utf-8")],
                                      body: Array(ConsoleAssets.stylesheet.utf8))
        case ("GET", "/static/console.js"):
            return HTTPServerResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/javascript; charset=utf-8")],
                                      body: Array(ConsoleAssets.script.utf8))
        case ("GET", "/login"):
            return loginPage(message: nil, nowMs: now)
        case ("POST", "/login"):
            return login(request, nowMs: now)
        case ("GET", "/healthz"):
            return .text(200, "ok")
        default:
            break
        }
        let cookie = FormFields.cookie(SessionStore.cookieName, header: request.header("Cookie"))
        guard let session = sessions.session(cookie, nowMs: now) else {
            // Only pages lead to the login form: each showing issues a new login nonce, so a
            // browser's own fetch (a favicon) must not replace the one in the form on screen.
            if request.method == "GET" && Self.pages.contains(request.path) {
                return HTTPServerResponse(status: 303, headers: [HTTPHeader(name: "Location", value: "/login")])
            }
            return Self.unauthorized
        }
        if request.method == "POST" {
            let fields = FormFields.decode(request.body)
            guard SessionStore.csrfMatches(fields["csrf"] ?? request.header("X-CSRF-Token"), session: session) else {
                context.logger.warning("refused: missing or wrong CSRF token", [("operator", .string(session.name)), ("path", .string(request.path))])
                return Self.forbidden
            }
            switch request.path {
            case "/logout":
                sessions.end(cookie)
                context.logger.notice("logout", [("operator", .string(session.name))])
                return HTTPServerResponse(status: 303, headers: [
                    HTTPHeader(name: "Location", value: "/login"),
                    HTTPHeader(name: "Set-Cookie", value: Self.cookie(SessionStore.cookieName, "", maxAgeSeconds: 0)),
                ])
            case "/dead-letters/preview":
                return previewPage(fields, session: session)
            case "/dead-letters/replay":
                guard session.role.mayReplay else {
                    context.logger.warning("refused: replay needs the replayer role", [("operator", .string(session.name))])
                    return Self.forbidden
                }
                return startReplay(fields, session: session)
            default:
                return Self.notFound
            }
        }
        guard request.method == "GET" else { return HTTPServerResponse.text(405, "method not allowed") }
        switch request.path {
        case "/": return overviewPage(session: session)
        case "/lag": return lagPage(session: session)
        case "/dead-letters": return deadLettersPage(request.query, session: session)
        case "/dead-letters/entry": return entryPage(request.query["id"], parked: request.query["parked"] == "1", session: session)
        case "/dead-letters/job": return jobPage(request.query["id"], session: session)
        case "/trace": return tracePage(request.query["q"], session: session)
        case "/events/overview": return overviewEvents(session: cookie ?? "", once: request.query["once"] == "1")
        case "/events/job": return jobEvents(request.query["id"], once: request.query["once"] == "1")
        default: return Self.notFound
        }
    }

    /// The console's pages (what a visitor without a session is sent to sign in from).
    static let pages: Set<String> = ["/", "/lag", "/dead-letters", "/dead-letters/entry", "/dead-letters/job", "/trace"]

    static let unauthorized = HTTPServerResponse.text(401, "unauthorized")
    static let forbidden = HTTPServerResponse.text(403, "forbidden")
    static let notFound = HTTPServerResponse.text(404, "not found")

    // MARK: - Login

    /// A sign-in: the form's nonce must be one this console issued (`LoginGuard`), unused, and
    /// the login cookie's value; then the throttle; then the token (PBKDF2 per configured token).
    private func login(_ request: HTTPServerRequest, nowMs: Int64) -> HTTPServerResponse {
        let fields = FormFields.decode(request.body)
        let cookie = FormFields.cookie(Self.loginCookie, header: request.header("Cookie"))
        guard let cookie, let presented = fields["login_csrf"], ConstantTime.equal(cookie, presented),
              loginGuard.consume(presented, nowMs: nowMs) else {
            context.logger.warning("refused: login without a login form's anti-forgery nonce this console issued",
                                   [("peer", .string(request.peer ?? "unknown"))])
            return Self.forbidden
        }
        guard loginGuard.admitAttempt(nowMs: nowMs) else {
            context.logger.warning("login refused: too many sign-in attempts", [("peer", .string(request.peer ?? "unknown"))])
            var page = loginPage(message: "Too many sign-in attempts: wait a few seconds and try again.", nowMs: nowMs)
            page.status = 429
            return page
        }
        guard let token = tokens.authenticate(fields["token"] ?? "") else {
            context.logger.warning("login refused: unknown token", [("peer", .string(request.peer ?? "unknown"))])
            var page = loginPage(message: "That token was not accepted.", nowMs: nowMs)
            page.status = 401
            return page
        }
        let (id, _) = sessions.create(for: token, nowMs: nowMs)
        context.logger.notice("login", [("operator", .string(token.name)), ("role", .string(token.role.rawValue))])
        return HTTPServerResponse(status: 303, headers: [
            HTTPHeader(name: "Location", value: "/"),
            HTTPHeader(name: "Set-Cookie", value: Self.cookie(SessionStore.cookieName, id, maxAgeSeconds: context.configuration.sessionLifetimeMs / 1000)),
            HTTPHeader(name: "Set-Cookie", value: Self.cookie(Self.loginCookie, "", maxAgeSeconds: 0)),
        ])
    }

    /// The login form, with a fresh nonce (`LoginGuard.issue`) in the form and in the login cookie:
    /// never one the browser already holds, which another origin on the host could have planted.
    private func loginPage(message: String?, nowMs: Int64) -> HTTPServerResponse {
        let value = loginGuard.issue(nowMs: nowMs)
        var html = "<form class=\"login\" method=\"post\" action=\"/login\"><h2>Provisioner console</h2>"
        if let message { html += "<p class=\"bad\" id=\"login-message\">\(HTML.escape(message))</p>" }
        html += "<label for=\"token\">Access token</label><input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"off\" autofocus>"
        html += HTML.hidden("login_csrf", value)
        html += "<button type=\"submit\" id=\"login-submit\">Sign in</button></form>"
        var response = Self.document(title: "Sign in", body: html, session: nil, current: "")
        response.headers.append(HTTPHeader(name: "Set-Cookie", value: Self.cookie(Self.loginCookie, value, maxAgeSeconds: nil)))
        return response
    }

    /// A `Set-Cookie` value for the console's `__Host-` cookies: `Path=/`, `Secure`, `HttpOnly`,
    /// `SameSite=Strict`, no `Domain` (what the prefix requires); `maxAgeSeconds` nil: a session cookie.
    static func cookie(_ name: String, _ value: String, maxAgeSeconds: Int64?) -> String {
        "\(name)=\(value); Path=/\(maxAgeSeconds.map { "; Max-Age=\($0)" } ?? ""); HttpOnly; Secure; SameSite=Strict"
    }

    // MARK: - Layout

    /// A full page: header with navigation and the session's name and role, then `body`.
    static func document(title: String, body: String, session: ConsoleSession?, current: String, stream: String? = nil) -> HTTPServerResponse {
        var html = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(HTML.escape(title)) · Provisioner console</title>"
        html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><link rel=\"stylesheet\" href=\"/static/console.css\"></head>"
        html += "<body\(stream.map { " data-stream=\"\(HTML.escape($0))\"" } ?? "")><header><h1>Provisioner console</h1>"
        if let session {
            html += "<nav>"
            for (path, label) in [("/", "Overview"), ("/lag", "Lag"), ("/dead-letters", "Dead letters"), ("/trace", "Request trace")] {
                html += "<a href=\"\(path)\"\(path == current ? " class=\"current\"" : "")>\(label)</a>"
            }
            html += "</nav><span class=\"who\" id=\"who\">\(HTML.escape(session.name)) (\(session.role.rawValue))</span>"
            html += "<form method=\"post\" action=\"/logout\">\(HTML.hidden("csrf", session.csrfToken))<button type=\"submit\">Sign out</button></form>"
        }
        html += "</header><main>\(body)</main><script src=\"/static/console.js\"></script></body></html>"
        return HTTPServerResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/html; charset=utf-8")],
                                  body: Array(html.utf8))
    }

    /// A page saying what went wrong (Kafka unreachable, a bad filter) in the operator's words.
    static func problem(_ title: String, _ message: String, session: ConsoleSession, current: String, status: Int = 200) -> HTTPServerResponse {
        var response = document(title: title, body: "<h2>\(HTML.escape(title))</h2><p class=\"bad\" id=\"problem\">\(HTML.escape(message))</p>",
                                session: session, current: current)
        response.status = status
        return response
    }

    /// One Server-Sent Event named `update` carrying `json`.
    static func event(_ json: [UInt8]) -> [UInt8] {
        Array("event: update\ndata: ".utf8) + json + Array("\n\n".utf8)
    }

    /// A Server-Sent Events answer: `first` (an `update` event), then, unless `once`, the
    /// connection stays open and `stream` carries the later events. `retry` tells the browser's
    /// EventSource how soon to reconnect if the connection drops.
    static func eventStream(first json: [UInt8], stream: HTTPEventStream?, retryMs: Int) -> HTTPServerResponse {
        let body = Array("retry: \(retryMs)\n".utf8) + event(json)
        let headers = [HTTPHeader(name: "Content-Type", value: "text/event-stream; charset=utf-8")]
        guard let stream else { return HTTPServerResponse(status: 200, headers: headers, body: body) }
        return HTTPServerResponse(status: 200, headers: headers, body: body, stream: stream)
    }
}
