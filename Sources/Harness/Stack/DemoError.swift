/// The embedded stack or the demo could not run.
public struct DemoError: Error, CustomStringConvertible {
    /// Why, in one line.
    public var message: String
    /// Creates an error.
    public init(message: String) { self.message = message }
    public var description: String { message }
}
