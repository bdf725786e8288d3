import COpenSSL

/// OpenSSL's thread-local error queue.
package enum OpenSSLErrorQueue {
    /// Empties the queue and returns its entries as one line (`ifEmpty` when it held none); the
    /// entries carry no key material.
    package static func drain(ifEmpty: String = "no OpenSSL detail") -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.isEmpty ? ifEmpty : parts.joined(separator: "; ")
    }
}
