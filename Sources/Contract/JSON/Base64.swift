/// Strict base64 (RFC 4648 section 4) and unpadded base64url (section 5) codecs.
///
/// Strict means: only the alphabet's 64 characters, padding exactly as required, no whitespace or
/// line breaks, and unused trailing bits zero, so every byte string has exactly one accepted text.
enum Base64 {
    private static let standardAlphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func decodingTable(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }

    private static let standardTable = decodingTable(standardAlphabet)
    private static let urlTable = decodingTable(urlAlphabet)

    static func encode(_ bytes: some Collection<UInt8>, url: Bool) -> String {
        contiguous(bytes) { buffer in
            String(unsafeUninitializedCapacity: encodedLength(buffer.count, url: url)) { write(buffer, url: url, into: $0) }
        }
    }

    /// Appends the encoding of `bytes` to `output` (grown in place: no intermediate array or string).
    static func append(_ bytes: some Collection<UInt8>, url: Bool, to output: inout [UInt8]) {
        contiguous(bytes) { buffer in
            let length = encodedLength(buffer.count, url: url)
            guard length > 0 else { return }
            let start = output.count
            output.append(contentsOf: repeatElement(0, count: length))
            output.withUnsafeMutableBufferPointer { whole in
                _ = write(buffer, url: url, into: UnsafeMutableBufferPointer(rebasing: whole[start...]))
            }
        }
    }

    private static func contiguous<R>(_ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let done = bytes.withContiguousStorageIfAvailable(body) { return done }
        return Array(bytes).withUnsafeBufferPointer(body)
    }

    private static func encodedLength(_ count: Int, url: Bool) -> Int {
        let rest = count % 3
        return count / 3 * 4 + (rest == 0 ? 0 : (url ? rest + 1 : 4))
    }

    /// Writes the encoding of `buffer` at the start of `out` (which has room); returns its length.
    private static func write(_ buffer: UnsafeBufferPointer<UInt8>, url: Bool, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let rest = buffer.count % 3
        let length = encodedLength(buffer.count, url: url)
        (url ? urlAlphabet : standardAlphabet).withUnsafeBufferPointer { table in
            var index = 0
            var at = 0
            let full = buffer.count - rest
            while index < full {
                let chunk = UInt32(buffer[index]) << 16 | UInt32(buffer[index + 1]) << 8 | UInt32(buffer[index + 2])
                out[at] = table[Int(chunk >> 18 & 0x3F)]
                out[at + 1] = table[Int(chunk >> 12 & 0x3F)]
                out[at + 2] = table[Int(chunk >> 6 & 0x3F)]
                out[at + 3] = table[Int(chunk & 0x3F)]
                index += 3
                at += 4
            }
            if rest > 0 {
                let chunk = UInt32(buffer[index]) << 16 | (rest == 2 ? UInt32(buffer[index + 1]) << 8 : 0)
                out[at] = table[Int(chunk >> 18 & 0x3F)]
                out[at + 1] = table[Int(chunk >> 12 & 0x3F)]
                at += 2
                if rest == 2 {
                    out[at] = table[Int(chunk >> 6 & 0x3F)]
                    at += 1
                }
                while !url && at < length {
                    out[at] = UInt8(ascii: "=")
                    at += 1
                }
            }
        }
        return length
    }

    /// Decodes strict padded base64, or returns `nil`.
    static func decode(_ text: String) -> [UInt8]? {
        var copy = text
        return copy.withUTF8 { decode($0, url: false) }
    }

    /// Decodes strict unpadded base64url, or returns `nil`.
    static func decodeURL(_ text: String) -> [UInt8]? {
        var copy = text
        return copy.withUTF8 { decode($0, url: true) }
    }

    static func decode(_ input: UnsafeBufferPointer<UInt8>, url: Bool) -> [UInt8]? {
        let table = url ? urlTable : standardTable
        var length = input.count
        var padding = 0
        if url {
            guard length % 4 != 1 else { return nil }
        } else {
            guard length % 4 == 0 else { return nil }
            if length > 0, input[length - 1] == UInt8(ascii: "=") {
                padding = 1
                if input[length - 2] == UInt8(ascii: "=") { padding = 2 }
            }
            length -= padding
        }
        var output = [UInt8]()
        output.reserveCapacity(length * 3 / 4)
        var index = 0
        while index + 4 <= length {
            let a = table[Int(input[index])], b = table[Int(input[index + 1])]
            let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
            guard a < 64, b < 64, c < 64, d < 64 else { return nil }
            let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            output.append(UInt8(chunk >> 16 & 0xFF))
            output.append(UInt8(chunk >> 8 & 0xFF))
            output.append(UInt8(chunk & 0xFF))
            index += 4
        }
        let remaining = length - index
        switch remaining {
        case 0:
            break
        case 2:
            let a = table[Int(input[index])], b = table[Int(input[index + 1])]
            guard a < 64, b < 64, b & 0x0F == 0 else { return nil }
            output.append(a << 2 | b >> 4)
        case 3:
            let a = table[Int(input[index])], b = table[Int(input[index + 1])], c = table[Int(input[index + 2])]
            guard a < 64, b < 64, c < 64, c & 0x03 == 0 else { return nil }
            output.append(a << 2 | b >> 4)
            output.append((b & 0x0F) << 4 | c >> 2)
        default:
            return nil
        }
        return output
    }
}
