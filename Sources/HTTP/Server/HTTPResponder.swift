/// Answers one request exactly once, from any thread, now or later (the connection is suspended meanwhile).
///
/// Answering inside the handler sends the response directly. Answering later costs no thread: the
/// connection is suspended when the handler returns and resumed when `respond` is called. Only the
/// first `respond` counts; later calls, and calls after the client's connection or the server has
/// gone away, are ignored.
public struct HTTPResponder: Sendable {
    let exchange: ServerExchange

    /// Sends `response` (the first call only).
    public func respond(_ response: HTTPServerResponse) {
        exchange.answer(response)
    }
}
