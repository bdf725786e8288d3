/// Decodes `application/x-www-form-urlencoded` bodies (and reads the `Cookie` header).
enum FormFields {
    /// Name → value (the first of repeated names); at most 64 fields of 4 KiB.
    static func decode(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")).prefix(64) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecode(Array(parts[0])), !name.isEmpty else { continue }
            let value = parts.count > 1 ? percentDecode(Array(parts[1])) ?? "" : ""
            if fields[name] == nil && value.utf8.count <= 4096 { fields[name] = value }
        }
        return fields
    }

    static func percentDecode(_ bytes: [UInt8]) -> String? {
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                      let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) {
                output.append(value)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return String(validating: output, as: UTF8.self)
    }

    /// The cookie `name` from a `Cookie` header.
    static func cookie(_ name: String, header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let trimmed = part.drop { $0 == " " }
            if trimmed.hasPrefix(name + "=") { return String(trimmed.dropFirst(name.count + 1)) }
        }
        return nil
    }
}
