#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One part of a `multipart/form-data` body ([RFC 7578](https://www.rfc-editor.org/rfc/rfc7578)):
/// a text field, bytes, or a file read from disk.
public struct MultipartPart: Sendable, Hashable {
    /// Where a part's bytes come from.
    public enum Content: Sendable, Hashable {
        /// Bytes in memory.
        case data(Data)
        /// A file, read while the request is sent (streamed from disk, never held whole).
        case file(URL)
    }

    /// The form field name.
    public var name: String
    /// The filename sent in `Content-Disposition`, if any.
    public var filename: String?
    /// The part's `Content-Type`, if any (RFC 7578 defaults to `text/plain`).
    public var contentType: MediaType?
    /// The part's bytes.
    public var content: Content

    /// Creates a part.
    /// - Parameters:
    ///   - name: The form field name.
    ///   - filename: The filename, if any.
    ///   - contentType: The media type, if any.
    ///   - content: The bytes or file.
    public init(name: String, filename: String? = nil, contentType: MediaType? = nil, content: Content) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.content = content
    }

    /// A text field, sent as UTF-8.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The text.
    /// - Returns: The part.
    public static func text(_ name: String, _ value: String) -> MultipartPart {
        MultipartPart(name: name, content: .data(Data(value.utf8)))
    }

    /// A text field: the same as ``text(_:_:)``, under the name HTML forms use.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The text.
    /// - Returns: The part.
    public static func field(_ name: String, _ value: String) -> MultipartPart {
        text(name, value)
    }

    /// A part with bytes from memory.
    /// - Parameters:
    ///   - name: The field name.
    ///   - data: The bytes.
    ///   - filename: The filename, if any.
    ///   - contentType: The media type; `application/octet-stream` by default.
    /// - Returns: The part.
    public static func data(
        _ name: String, _ data: Data, filename: String? = nil, contentType: MediaType? = .octetStream
    ) -> MultipartPart {
        MultipartPart(name: name, filename: filename, contentType: contentType, content: .data(data))
    }

    /// A part read from a file when the body is encoded.
    /// - Parameters:
    ///   - name: The field name.
    ///   - url: A file URL.
    ///   - filename: The filename; the URL's last path component by default.
    ///   - contentType: The media type; `application/octet-stream` by default.
    /// - Returns: The part.
    public static func file(
        _ name: String, at url: URL, filename: String? = nil, contentType: MediaType? = .octetStream
    ) -> MultipartPart {
        MultipartPart(name: name, filename: filename ?? url.lastPathComponent, contentType: contentType, content: .file(url))
    }

    /// A part read from a file: the same as ``file(_:at:filename:contentType:)``, written
    /// without the `at:` label.
    /// - Parameters:
    ///   - name: The field name.
    ///   - url: A file URL.
    ///   - filename: The filename; the URL's last path component by default.
    ///   - contentType: The media type; `application/octet-stream` by default.
    /// - Returns: The part.
    public static func file(
        _ name: String, _ url: URL, filename: String? = nil, contentType: MediaType? = .octetStream
    ) -> MultipartPart {
        file(name, at: url, filename: filename, contentType: contentType)
    }
}

/// Encodes `multipart/form-data` bodies.
///
/// The boundary carries 128 random bits. If any part happens to contain it, a new boundary is
/// drawn and the body encoded again. Field names and filenames are quoted with `"`, CR and LF
/// escaped as `%22`, `%0D` and `%0A` (as browsers do); a part `Content-Type` containing CR, LF or
/// another control character is an error. Files are read in chunks straight into the body, so a
/// file is never held in memory twice.
public struct MultipartEncoder: Sendable {
    /// Supplies random bits for boundaries.
    public typealias RandomSource = @Sendable () -> UInt64

    private let random: RandomSource

    /// How many boundaries are tried before giving up.
    static let maximumAttempts = 8
    /// How much of a file is read at a time.
    static let chunkSize = 1 << 20

    /// Creates an encoder.
    /// - Parameter random: The source of random bits; the system generator by default. Tests
    ///   inject a fixed sequence.
    public init(random: @escaping RandomSource = { UInt64.random(in: .min ... .max) }) {
        self.random = random
    }

    /// A new boundary: `courier-` and 32 hex digits (128 random bits).
    public func makeBoundary() -> String {
        let high = String(random(), radix: 16)
        let low = String(random(), radix: 16)
        return "courier-" + String(repeating: "0", count: 16 - high.count) + high
            + String(repeating: "0", count: 16 - low.count) + low
    }

    /// Encodes parts into a body.
    /// - Parameter parts: The parts, in order.
    /// - Returns: The body and the boundary it uses.
    /// - Throws: ``RequestProblem`` when a file cannot be read, a content type is invalid, or no
    ///   boundary absent from the content could be found.
    public func encode(_ parts: [MultipartPart]) throws(RequestProblem) -> (body: Data, boundary: String) {
        for (index, part) in parts.enumerated() {
            if let type = part.contentType, HTTPSyntax.headerValueDefect(type.rawValue) != nil {
                throw RequestProblem(.bodyEncodingFailed, "multipart part \(index) has a Content-Type with a control character")
            }
        }
        for _ in 0..<Self.maximumAttempts {
            let boundary = makeBoundary()
            let body = try encode(parts, boundary: boundary)
            if Self.occurrences(of: Data(("--" + boundary).utf8), in: body) == parts.count + 1 {
                return (body, boundary)
            }
        }
        throw RequestProblem(.bodyEncodingFailed, "no multipart boundary absent from the content was found")
    }

    private func encode(_ parts: [MultipartPart], boundary: String) throws(RequestProblem) -> Data {
        var body = Data()
        body.reserveCapacity(Self.estimatedSize(of: parts))
        for (index, part) in parts.enumerated() {
            body.append(contentsOf: Self.head(of: part, boundary: boundary).utf8)
            switch part.content {
            case .data(let data):
                body.append(data)
            case .file(let url):
                try Self.appendFile(url, part: index, to: &body)
            }
            body.append(contentsOf: "\r\n".utf8)
        }
        body.append(contentsOf: "--\(boundary)--\r\n".utf8)
        return body
    }

    /// Lays the parts out as segments for a body read when the request is sent: part heads and
    /// in-memory parts as bytes, files as references read then (never now). The boundary is
    /// checked against the in-memory content; file content is not scanned (the boundary's 128
    /// random bits make a collision negligible).
    /// - Parameter parts: The parts, in order.
    /// - Returns: The segments and the boundary.
    /// - Throws: ``RequestProblem`` for an invalid content type, or a file that is not a
    ///   readable local file now.
    func segments(_ parts: [MultipartPart]) throws(RequestProblem) -> (segments: [BodySource.Segment], boundary: String) {
        for (index, part) in parts.enumerated() {
            if let type = part.contentType, HTTPSyntax.headerValueDefect(type.rawValue) != nil {
                throw RequestProblem(.bodyEncodingFailed, "multipart part \(index) has a Content-Type with a control character")
            }
            if case .file(let url) = part.content, !(url.isFileURL && FileManager.default.isReadableFile(atPath: url.path)) {
                throw RequestProblem(
                    .bodyEncodingFailed, "multipart part \(index): the file \(url.lastPathComponent.debugDescription) could not be read")
            }
        }
        for _ in 0..<Self.maximumAttempts {
            let boundary = makeBoundary()
            let marker = Data(("--" + boundary).utf8)
            var segments: [BodySource.Segment] = []
            var pending = Data()
            var clash = false
            for part in parts {
                pending.append(contentsOf: Self.head(of: part, boundary: boundary).utf8)
                switch part.content {
                case .data(let data):
                    if Self.occurrences(of: marker, in: data) > 0 { clash = true }
                    pending.append(data)
                case .file(let url):
                    segments.append(.data(pending))
                    pending = Data()
                    segments.append(.file(url))
                }
                pending.append(contentsOf: "\r\n".utf8)
            }
            pending.append(contentsOf: "--\(boundary)--\r\n".utf8)
            segments.append(.data(pending))
            if !clash { return (segments, boundary) }
        }
        throw RequestProblem(.bodyEncodingFailed, "no multipart boundary absent from the content was found")
    }

    /// The boundary line and headers that open `part`, up to and including the blank line.
    static func head(of part: MultipartPart, boundary: String) -> String {
        var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escape(part.name))\""
        if let filename = part.filename { head += "; filename=\"\(escape(filename))\"" }
        head += "\r\n"
        if let type = part.contentType { head += "Content-Type: \(type.rawValue)\r\n" }
        return head + "\r\n"
    }

    /// Escapes `"`, CR and LF in a quoted header parameter.
    static func escape(_ value: String) -> String {
        guard value.contains(where: { $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return value }
        var output = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "%22"
            case "\r": output += "%0D"
            case "\n": output += "%0A"
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    private static func appendFile(_ url: URL, part index: Int, to body: inout Data) throws(RequestProblem) {
        let problem = RequestProblem(.bodyEncodingFailed, "multipart part \(index): the file \(url.lastPathComponent.debugDescription) could not be read")
        guard url.isFileURL else { throw problem }
        do {
            let handle = try OpenFile.reading(url.path)
            defer { handle.close() }
            while case let chunk = try handle.read(upTo: chunkSize), !chunk.isEmpty {
                body.append(chunk)
            }
        } catch {
            throw problem
        }
    }

    private static func estimatedSize(of parts: [MultipartPart]) -> Int {
        parts.reduce(64) { total, part in
            switch part.content {
            case .data(let data): return total + data.count + 256
            case .file(let url):
                let size = url.isFileURL ? OpenFile.size(atPath: url.path) ?? 0 : 0
                return total + Int(clamping: min(size, 1 << 32)) + 256
            }
        }
    }

    static func occurrences(of needle: Data, in haystack: Data) -> Int {
        var count = 0
        var start = haystack.startIndex
        while let found = haystack[start...].firstRange(of: needle) {
            count += 1
            start = found.upperBound
        }
        return count
    }
}
