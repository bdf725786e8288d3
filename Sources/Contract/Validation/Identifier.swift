/// Character-set checks for identifiers that may appear in results, audit events and headers.
enum Identifier {
    /// `[A-Za-z0-9._:-]`, the `request_id` alphabet.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: ":"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// 1–`maxLength` bytes of `[A-Za-z0-9._:-]`.
    static func isToken(_ text: String, maxLength: Int = 64) -> Bool {
        let utf8 = text.utf8
        return !utf8.isEmpty && utf8.count <= maxLength && utf8.allSatisfy(isTokenByte)
    }

    /// A card id: 1–128 of `[A-Za-z0-9._~:-]`, not only dots (it goes into URL paths).
    static func isCardID(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 128 else { return false }
        guard utf8.allSatisfy({ isTokenByte($0) || $0 == UInt8(ascii: "~") }) else { return false }
        return !utf8.allSatisfy { $0 == UInt8(ascii: ".") }
    }

    /// No C0 control characters and no DEL.
    static func hasNoControlCharacters(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
    }

    private static let transactionReferencePunctuation = Set("-_/!@#$%()*=.:;?[]{}~+".utf8)

    /// Worldpay `transactionReference`: 1–64 of letters, digits and `-_/!@#$%()*=.:;?[]{}~+`.
    static func isTransactionReference(_ text: String) -> Bool {
        let allowed = transactionReferencePunctuation
        let utf8 = text.utf8
        return !utf8.isEmpty && utf8.count <= 64 && utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || allowed.contains(byte)
        }
    }
}
