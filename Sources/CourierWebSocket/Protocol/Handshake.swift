import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The opening handshake (RFC 6455 §4): the request's headers, and the checks a client makes of
/// the server's `101`.
package struct Handshake: Sendable {
    /// The GUID RFC 6455 §1.3 appends to the key.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// The `Sec-WebSocket-Key`: 16 random bytes, Base64.
    package let key: String
    /// The subprotocols offered.
    package let subprotocols: [String]
    /// The compression offered, if any.
    package let compression: WebSocketCompression?

    package init(key: String, subprotocols: [String], compression: WebSocketCompression? = nil) {
        self.key = key
        self.subprotocols = subprotocols
        self.compression = compression
    }

    /// A handshake with a fresh random key.
    init(subprotocols: [String], compression: WebSocketCompression? = nil, random: RandomSource = .system) {
        var bytes = [UInt8]()
        for _ in 0..<2 {
            let word = random.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        self.init(key: Data(bytes).base64EncodedString(), subprotocols: subprotocols, compression: compression)
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with.
    package static func accept(for key: String) -> String {
        Data(SHA1.digest(Array((key + guid).utf8))).base64EncodedString()
    }

    /// `request` as the handshake sends it: `ws` and `wss` URLs as `http` and `https` (RFC 6455
    /// §3), a `GET` without a body, with the key, the version and the subprotocols. The problems
    /// found are recorded on the request, so its validation refuses it and nothing is sent.
    func prepare(_ request: Request) -> Request {
        var request = request
        var problems: [RequestProblem] = []
        if let base = request.baseURL, let scheme = base.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
            var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        {
            components.scheme = scheme == "ws" ? "http" : "https"
            if let mapped = components.url { request.baseURL = mapped }
        }
        if request.method != .get {
            problems.append(RequestProblem(.invalidMethod, "a WebSocket opens with GET, not \(request.method.rawValue)"))
        }
        if request.body != nil || request.bodySource != nil {
            problems.append(RequestProblem(.invalidFraming, "a WebSocket's opening request has no body"))
        }
        for name in subprotocols where !HTTPSyntax.isToken(name) {
            problems.append(
                RequestProblem(.invalidHeaderValue, "the subprotocol \(name.prefix(40).debugDescription) is not an HTTP token"))
        }
        if Set(subprotocols).count != subprotocols.count {
            problems.append(RequestProblem(.invalidHeaderValue, "a subprotocol is offered twice"))
        }
        request.headers.set("Sec-WebSocket-Key", key)
        request.headers.set("Sec-WebSocket-Version", "13")
        if !subprotocols.isEmpty { request.headers.set("Sec-WebSocket-Protocol", subprotocols.joined(separator: ", ")) }
        if let compression { request.headers.set("Sec-WebSocket-Extensions", PerMessageDeflate.offer(compression)) }
        for problem in problems { request.record(problem) }
        return request
    }

    /// ``accept(_:)``'s subprotocol.
    package func check(_ headers: HTTPHeaders) throws(WebSocketFailure) -> String? {
        try accept(headers).subprotocol
    }

    /// Checks the server's `101` (RFC 6455 §4.1): `Upgrade: websocket`, `Connection: Upgrade`,
    /// the right `Sec-WebSocket-Accept`, a subprotocol only among those offered, an extension
    /// only as offered (RFC 7692 §7.1). Returns the chosen subprotocol and compression.
    /// - Throws: ``WebSocketFailure/Kind/handshakeFailed``, saying what was wrong.
    package func accept(_ headers: HTTPHeaders) throws(WebSocketFailure) -> (subprotocol: String?, compression: NegotiatedCompression?) {
        guard let upgrade = headers["Upgrade"], Self.tokens(upgrade).contains("websocket") else {
            throw Self.failed("the 101 does not say Upgrade: websocket")
        }
        guard let connection = headers["Connection"], Self.tokens(connection).contains("upgrade") else {
            throw Self.failed("the 101 does not say Connection: Upgrade")
        }
        guard let accept = headers["Sec-WebSocket-Accept"], HTTPSyntax.trimmed(accept) == Self.accept(for: key) else {
            throw Self.failed("the 101's Sec-WebSocket-Accept does not answer the key sent")
        }
        let compression = try PerMessageDeflate.accept(headers["Sec-WebSocket-Extensions"], offered: self.compression)
        guard let chosen = headers["Sec-WebSocket-Protocol"].map({ HTTPSyntax.trimmed($0) }), !chosen.isEmpty else {
            return (nil, compression)
        }
        guard subprotocols.contains(chosen) else {
            throw Self.failed("the server chose a subprotocol that was not offered")
        }
        return (chosen, compression)
    }

    private static func tokens(_ value: String) -> [String] {
        value.split(separator: ",").map { HTTPSyntax.asciiLowercased(HTTPSyntax.trimmed(String($0))) }
    }

    private static func failed(_ message: String) -> WebSocketFailure {
        WebSocketFailure(.handshakeFailed, message: message)
    }
}
