import Contract
import Foundation
import Kafka
import TestSupport

/// Generated bad input for the requests topic, each message with the answer the contract demands:
/// a `rejected` result (a `request_id` can be read) or a dead letter with a given code.
struct MalformedInput {
    enum Expected: Sendable, Equatable {
        /// A final `rejected` result for this request id.
        case rejected(String)
        /// A dead letter; with its `dlq.code` when the category fixes it.
        case deadLetter(code: String?)
    }

    struct Message: Sendable {
        var category: String
        var key: [UInt8]?
        var value: [UInt8]?
        var headers: [KafkaHeader]
        var expected: Expected
    }

    private var random: SeededGenerator
    private let template: JSONValue
    private var counter = 0
    private var serial = 0
    private let runID: String

    /// `template` is a valid request (its `request_id` is replaced per message).
    init(seed: UInt64, template: JSONValue) {
        random = SeededGenerator(seed: seed)
        self.template = template
        runID = String(seed, radix: 36)
    }

    private mutating func nextID(_ category: String) -> String {
        counter += 1
        return "bad-\(runID)-\(counter)-\(category.prefix(12))"
    }

    /// A valid request document with a fresh id.
    private mutating func base(_ category: String) -> (JSONValue, String) {
        let id = nextID(category)
        return (template.setting("request_id", .string(id)), id)
    }

    private mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }

    /// Every category, in the order `next()` cycles through them (huge and 1 MB ones are made apart).
    static let categories = [
        "truncated_json", "broken_syntax", "invalid_utf8", "binary_garbage", "empty_value", "deep_nesting", "unknown_version",
        "missing_request_id", "bad_request_id", "not_an_object", "wrong_types", "missing_fields", "empty_strings",
        "huge_strings", "unknown_program", "unknown_wallet_or_kind", "nested_unknown_member", "bad_values", "bad_apple_handshake",
    ]

    /// The next message of `category`.
    mutating func make(_ category: String) -> Message {
        var message = build(category)
        serial += 1
        message.key = Array("pm_bad_\(serial)".utf8)
        // Kafka-level noise that must not change the answer: no key, a binary key, garbage headers.
        switch Int.random(in: 0..<6, using: &random) {
        case 0: message.key = nil
        case 1: message.key = random.bytes(Int.random(in: 1...64, using: &random))
        case 2: message.headers.append(KafkaHeader(key: "traceparent", value: random.bytes(Int.random(in: 1...300, using: &random))))
        case 3: message.headers.append(KafkaHeader(key: String(decoding: random.bytes(8), as: UTF8.self), value: nil))
        default: break
        }
        return message
    }

    private mutating func build(_ category: String) -> Message {
        func dead(_ value: [UInt8]?, _ code: String?) -> Message {
            Message(category: category, key: Array("pm_bad".utf8), value: value, headers: [], expected: .deadLetter(code: code))
        }
        func rejected(_ document: JSONValue, _ id: String) -> Message {
            Message(category: category, key: Array("pm_bad".utf8), value: document.bytes, headers: [], expected: .rejected(id))
        }
        func rejectedBytes(_ bytes: [UInt8], _ id: String) -> Message {
            Message(category: category, key: Array("pm_bad".utf8), value: bytes, headers: [], expected: .rejected(id))
        }
        switch category {
        case "truncated_json":
            let bytes = base(category).0.bytes
            return dead(Array(bytes.prefix(Int.random(in: 1..<bytes.count, using: &random))), "not_json")
        case "broken_syntax":
            let text = String(decoding: base(category).0.bytes, as: UTF8.self)
            let broken: String = switch Int.random(in: 0..<8, using: &random) {
            case 0: "{,," + text.dropFirst()
            case 1: text.dropLast() + ",}"
            case 2: "{'" + text.dropFirst(2)
            case 3: text + "x"
            case 4: text.replacingOccurrences(of: "\"version\":1", with: "\"version\":NaN")
            case 5: "/* c */" + text
            case 6: text.replacingOccurrences(of: "\":", with: "\"=")
            default: text.replacingOccurrences(of: "{\"", with: "{\"\u{0}")
            }
            return dead(Array(broken.utf8), "not_json")
        case "invalid_utf8":
            let bytes = base(category).0.bytes
            // Inside the first string value after `"request_id":"`.
            let marker = Array("\"request_id\":\"".utf8)
            let at = (0...(bytes.count - marker.count)).first { Array(bytes[$0..<$0 + marker.count]) == marker }.map { $0 + marker.count } ?? 2
            let bad: [UInt8] = pick([[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x80], [0xE2, 0x82], [0xF5, 0x80, 0x80, 0x80], [0xFE, 0xFE]])
            return dead(Array(bytes[..<at]) + bad + Array(bytes[at...]), "invalid_utf8")
        case "binary_garbage":
            var bytes = random.bytes(Int.random(in: 1...2_000, using: &random))
            if bytes[0] == UInt8(ascii: "{") { bytes[0] = 0 }
            return dead(bytes, nil)
        case "empty_value":
            return pick([dead([], "not_json"), dead(nil, "not_json"), dead(Array("  \n\t ".utf8), "not_json")])
        case "deep_nesting":
            let depth = Int.random(in: 65...5_000, using: &random)
            let (_, id) = base(category)
            return pick([
                dead(Array(("{\"request_id\":\"\(id)\",\"x\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8), "not_json"),
                dead(Array((String(repeating: "[", count: depth * 4)).utf8), "not_json"),
                dead(Array((String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)).utf8), "not_json"),
            ])
        case "unknown_version":
            let version: JSONValue = pick([.integer(2), .integer(0), .integer(-1), .integer(99_999_999_999), .string("1"), .bool(true),
                                           .array([.integer(1)]), .object([:])])
            return dead(base(category).0.setting("version", version).bytes, "unknown_version")
        case "missing_request_id":
            return dead(base(category).0.setting("request_id", pick([nil, .null])).bytes, "missing_request_id")
        case "bad_request_id":
            let id: JSONValue = pick([.integer(42), .string(""), .string(String(repeating: "a", count: 65)), .string("has space"),
                                      .string("slash/id"), .string("ünïcode"), .array([]), .bool(false), .string("semi;colon")])
            return dead(base(category).0.setting("request_id", id).bytes, "malformed_request_id")
        case "not_an_object":
            return dead(Array(pick(["[]", "\"request\"", "123", "true", "null", "[{\"request_id\":\"x\"}]", "-0.5e3"]).utf8), "not_an_object")
        case "wrong_types":
            let (document, id) = base(category)
            let path = pick(["program", "wallet", "card", "card.id", "card.last4", "card.user_id", "kind", "started_at", "deadline",
                             "google", "google.wallet_id", "google.device_id", "reply", "reply.jwk", "reply.jwk.x"])
            let value: JSONValue = pick([.integer(5), .bool(true), .array([]), .object([:]), .number(JSONNumber(literal: "1.5")!)])
            // An object where an object is expected would be valid: use a number there.
            let fixed: JSONValue = (["card", "google", "reply", "reply.jwk"].contains(path) && value.objectValue != nil) ? .integer(7) : value
            return rejected(document.setting(path, fixed), id)
        case "missing_fields":
            let (document, id) = base(category)
            return rejected(document.setting(pick(["program", "wallet", "card", "card.id", "google", "reply.jwk", "reply.jwk.x", "reply.jwk.crv",
                                                   "google.wallet_id", "google.device_id"]), nil), id)
        case "empty_strings":
            let (document, id) = base(category)
            return rejected(document.setting(pick(["program", "wallet", "card.id", "kind", "google.wallet_id", "google.device_id",
                                                   "card.last4", "started_at"]), .string("")), id)
        case "huge_strings":
            let (document, id) = base(category)
            let huge = String(repeating: pick(["A", "é", "x", "9"]), count: Int.random(in: 2_000...30_000, using: &random))
            return rejected(document.setting(pick(["program", "wallet", "card.id", "card.user_id", "kind", "card.last4", "started_at"]),
                                             .string(huge)), id)
        case "unknown_program":
            let (document, id) = base(category)
            return rejected(document.setting("program", .string(pick(["no-such-program", "demo-imprint2", "DEMO-IMPRINT", "x"]))), id)
        case "unknown_wallet_or_kind":
            let (document, id) = base(category)
            return pick([rejected(document.setting("wallet", .string(pick(["samsung_pay", "APPLE_PAY", "apple pay"]))), id),
                         rejected(document.setting("kind", .string(pick(["refund", "PROVISION", "payment_actions"]))), id)])
        case "nested_unknown_member":
            let (document, id) = base(category)
            var nested: JSONValue = .integer(1)
            for _ in 0..<Int.random(in: 10...60, using: &random) { nested = pick([.array([nested]), .object(["n": nested])]) }
            return rejected(document.setting("extra", nested).setting("program", nil), id)
        case "bad_values":
            let (document, id) = base(category)
            return pick([
                rejected(document.setting("card.last4", .string(pick(["42a2", "424", "42424", "４２４２"]))), id),
                rejected(document.setting("started_at", .string(pick(["yesterday", "2026-13-01T00:00:00Z", "2026-11-29 10:00:00"]))), id),
                rejected(document.setting("card.user_id", .string("u\u{1}ser")), id),
                rejected(document.setting("card.id", .string(pick(["has space", "slash/", "...", "ü"]))), id),
                rejected(document.setting("reply.jwk.crv", .string("P-384")), id),
                rejected(document.setting("google.wallet_id", .string("   ")), id),
            ])
        case "bad_apple_handshake":
            let (document, id) = base(category)
            let apple: JSONValue = .object([
                "certificates": pick([.array([.string("AAAA")]), .array([.string("not base64!"), .string("AAAA")]), .array([])]),
                "nonce": .string(pick(["", "bm9uY2U=", "raw nonce"])), "nonce_signature": .string(pick(["", "c2ln", "raw"])),
                "device_type": .string("iphone"), "app_version": .string("5.2.0"),
            ])
            return rejected(document.setting("wallet", .string("apple_pay")).setting("google", nil).setting("apple", apple), id)
        default:
            fatalError("unknown category \(category)")
        }
    }

    /// A message over the 64 KiB request limit (`bytes` long), with a readable request id.
    mutating func oversize(bytes: Int, category: String) -> Message {
        let (document, _) = base(category)
        let without = document.bytes.count
        let padded = document.setting("padding", .string(String(repeating: "p", count: max(0, bytes - without - 14))))
        serial += 1
        return Message(category: category, key: Array("pm_big_\(serial)".utf8), value: padded.bytes, headers: [], expected: .deadLetter(code: "oversize"))
    }
}
