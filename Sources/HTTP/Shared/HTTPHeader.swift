/// One HTTP header field: a name and its value, as sent or received.
public struct HTTPHeader: Sendable, Hashable {
    /// The field name; compared without regard to ASCII case by the lookup helpers.
    public var name: String
    /// The field value, without surrounding whitespace.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HTTPHeader {
    /// True when `name` equals this header's name ignoring ASCII case (HTTP field names are ASCII).
    func hasName(_ name: String) -> Bool {
        HTTPHeader.namesEqual(self.name, name)
    }

    /// Compares two field names ignoring ASCII case, without allocating.
    static func namesEqual(_ left: String, _ right: String) -> Bool {
        var leftBytes = left.utf8.makeIterator()
        var rightBytes = right.utf8.makeIterator()
        while true {
            switch (leftBytes.next(), rightBytes.next()) {
            case (nil, nil):
                return true
            case let (l?, r?):
                if l != r && lowercased(l) != lowercased(r) { return false }
            default:
                return false
            }
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte
    }
}

extension Array where Element == HTTPHeader {
    /// The value of the first header named `name` (ASCII case-insensitive), if any.
    func firstValue(named name: String) -> String? {
        first { $0.hasName(name) }?.value
    }
}
