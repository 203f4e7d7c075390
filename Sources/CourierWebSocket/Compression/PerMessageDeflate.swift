import CourierCore

/// The permessage-deflate negotiation (RFC 7692 §7.1): the client's offer, and the checks a
/// client makes of the server's answer.
package enum PerMessageDeflate {
    /// The `Sec-WebSocket-Extensions` offer: this end lets the server bound its window, says when
    /// it takes no context over between its messages, and asks the server to take none over when
    /// `compression` says so.
    package static func offer(_ compression: WebSocketCompression) -> String {
        var offer = "permessage-deflate"
        if compression.clientNoContextTakeover { offer += "; client_no_context_takeover" }
        offer += "; client_max_window_bits"
        if compression.serverNoContextTakeover { offer += "; server_no_context_takeover" }
        return offer
    }

    /// Reads the server's `Sec-WebSocket-Extensions` (all its fields joined): `nil` when it chose
    /// none; what it accepted of the offer, when there was one.
    /// - Throws: ``WebSocketFailure/Kind/handshakeFailed``: an extension that was not offered, a
    ///   parameter that is unknown, repeated, without the value it needs or with one it may not
    ///   have, or a window outside 8…15 (RFC 7692 §7.1: the client fails the connection).
    package static func accept(_ field: String?, offered: WebSocketCompression?) throws(WebSocketFailure) -> NegotiatedCompression? {
        guard let field else { return nil }
        let elements = HTTPSyntax.parts(of: field, separatedBy: UInt8(ascii: ",")).filter { !$0.isEmpty }
        guard !elements.isEmpty else { return nil }
        guard offered != nil else { throw failed("the server chose an extension, but none was offered") }
        guard elements.count == 1 else { throw failed("the server chose \(elements.count) extensions; one was offered") }
        var parameters = HTTPSyntax.parts(of: elements[0], separatedBy: UInt8(ascii: ";"))
        let name = HTTPSyntax.asciiLowercased(parameters.removeFirst())
        guard name == "permessage-deflate" else {
            throw failed("the server chose the extension \(name.prefix(40).debugDescription), which was not offered")
        }
        // This end takes no context over when it said so, or when the server asks it not to
        // (RFC 7692 §7.1.1.2).
        var negotiated = NegotiatedCompression(
            serverNoContextTakeover: false, serverMaxWindowBits: 15, clientMaxWindowBits: 15,
            clientNoContextTakeover: offered?.clientNoContextTakeover ?? true)
        var seen: Set<String> = []
        for parameter in parameters {
            let (rawName, rawValue) = HTTPSyntax.nameAndValue(of: parameter)
            let name = HTTPSyntax.asciiLowercased(rawName)
            let value = rawValue.map(unquoted)
            guard seen.insert(name).inserted else { throw failed("permessage-deflate's \(name) appears twice") }
            switch name {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard value == nil else { throw failed("permessage-deflate's \(name) takes no value") }
                if name == "server_no_context_takeover" { negotiated.serverNoContextTakeover = true } else { negotiated.clientNoContextTakeover = true }
            case "server_max_window_bits", "client_max_window_bits":
                guard let value, let bits = windowBits(value) else {
                    throw failed("permessage-deflate's \(name) needs a value from 8 to 15")
                }
                if name == "server_max_window_bits" { negotiated.serverMaxWindowBits = bits } else { negotiated.clientMaxWindowBits = bits }
            default:
                throw failed("permessage-deflate's answer has the unknown parameter \(name.prefix(40).debugDescription)")
            }
        }
        return negotiated
    }

    /// 8…15 written as RFC 7692 §7.1.2 asks: digits, no leading zero.
    private static func windowBits(_ value: String) -> Int? {
        guard (1...2).contains(value.utf8.count), value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), value.utf8.first != 0x30,
            let bits = Int(value), (8...15).contains(bits)
        else { return nil }
        return bits
    }

    /// A value without the quotes of a quoted-string (RFC 6455 §9.1 allows one, holding a token).
    private static func unquoted(_ value: String) -> String {
        let bytes = Array(value.utf8)
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return value }
        return String(decoding: bytes[1..<(bytes.count - 1)], as: UTF8.self)
    }

    private static func failed(_ message: String) -> WebSocketFailure {
        WebSocketFailure(.handshakeFailed, message: message)
    }
}
