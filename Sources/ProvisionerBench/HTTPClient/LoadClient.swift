/// An HTTP client under measurement: sends one POST and reports whether a 200 came back.
protocol LoadClient: Sendable {
    /// Posts `body`, asking the server to hold the answer `delayMs`; `completion` gets success or a
    /// short failure description.
    func post(body: [UInt8], delayMs: Int, timeoutMs: Int, completion: @escaping @Sendable (_ failure: String?) -> Void)
    /// Releases the client (fails what is still pending).
    func close()
}
