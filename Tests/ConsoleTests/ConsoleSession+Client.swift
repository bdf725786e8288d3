import Foundation
import HTTP
import TestSupport

/// A logged-in HTTP client of the console (what a browser does, without JavaScript): keeps the
/// session cookie and the page's CSRF token.
final class ConsoleClient: @unchecked Sendable {
    // @unchecked: used from one test task at a time.
    let base: String
    let client = HTTPClient()
    private(set) var session: String?
    private(set) var csrf: String?
    /// Every body received, for the canary scan.
    private(set) var seen: [String] = []

    init(base: String) { self.base = base }

    deinit { client.shutdown() }

    static func field(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    /// Adds text received elsewhere (a stream) to what the canary scan reads.
    func record(_ text: String) { seen.append(text) }

    /// Logs in with `token`; returns the final status (303 on success).
    func login(_ token: String) async throws -> Int {
        let form = try await client.execute(HTTPClientRequest(method: "GET", url: base + "/login", timeoutMs: 20_000)).get()
        let html = String(decoding: form.body, as: UTF8.self)
        seen.append(html)
        guard let value = Self.field("login_csrf", in: html) else { throw TestSupportError("no login_csrf field") }
        let body = "token=\(token)&login_csrf=\(value)"
        let answer = try await client.execute(HTTPClientRequest(
            method: "POST", url: base + "/login",
            headers: [HTTPHeader(name: "Cookie", value: "__Host-console_login=\(value)"),
                      HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Array(body.utf8), timeoutMs: 20_000)).get()
        seen.append(String(decoding: answer.body, as: UTF8.self))
        if let cookie = answer.headers.first(where: { $0.name.lowercased() == "set-cookie" && $0.value.hasPrefix("__Host-console_session=") }) {
            session = String(cookie.value.dropFirst("__Host-console_session=".count).prefix { $0 != ";" })
            _ = try await get("/")
        }
        return answer.status
    }

    /// GETs `path` with the session; returns status and body.
    func get(_ path: String) async throws -> (status: Int, body: String, headers: [HTTPHeader]) {
        let answer = try await client.execute(HTTPClientRequest(
            method: "GET", url: base + path, headers: session.map { [HTTPHeader(name: "Cookie", value: "__Host-console_session=\($0)")] } ?? [],
            timeoutMs: 60_000)).get()
        let body = String(decoding: answer.body, as: UTF8.self)
        seen.append(body)
        if let token = Self.field("csrf", in: body) { csrf = token }
        return (answer.status, body, answer.headers)
    }

    /// POSTs form `fields` (plus the CSRF token unless `withCSRF` is false) to `path`.
    func post(_ path: String, _ fields: [(String, String)], withCSRF: Bool = true) async throws -> (status: Int, body: String, location: String?) {
        var all = fields
        if withCSRF, let csrf { all.append(("csrf", csrf)) }
        let body = all.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        let answer = try await client.execute(HTTPClientRequest(
            method: "POST", url: base + path,
            headers: (session.map { [HTTPHeader(name: "Cookie", value: "__Host-console_session=\($0)")] } ?? [])
                + [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Array(body.utf8), timeoutMs: 60_000)).get()
        let text = String(decoding: answer.body, as: UTF8.self)
        seen.append(text)
        return (answer.status, text, answer.header("Location"))
    }
}
