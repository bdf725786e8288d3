extension Array where Element == UInt8 {
    /// The bytes as UTF-8 text.
    var string: String { String(decoding: self, as: UTF8.self) }
}
