/// Internationalized host names in their ASCII form (IDNA, RFC 5890/5891; Punycode, RFC 3492), as
/// URLs on Apple platforms give them: `bücher.example` is `xn--bcher-kva.example`, the name DNS,
/// TLS and the cookie jar compare. Each label is lower-cased and put in Unicode's composed form
/// (NFC) first, so that two spellings of one name are one host.
package enum InternationalHost {
    /// `host` in its ASCII form; `host` itself when it is ASCII; `nil` when a label cannot be a
    /// host name (a space, a control or punctuation character, a label over 63 bytes, a name over
    /// 253).
    package static func ascii(_ host: Substring) -> String? {
        guard host.utf8.contains(where: { $0 >= 0x80 }) else { return String(host) }
        // The ideographic and fullwidth full stops separate labels too (UTS #46).
        let labels = host.split(omittingEmptySubsequences: false) { $0 == "." || $0 == "\u{3002}" || $0 == "\u{FF0E}" || $0 == "\u{FF61}" }
        var converted: [String] = []
        converted.reserveCapacity(labels.count)
        for label in labels {
            guard label.utf8.contains(where: { $0 >= 0x80 }) else {
                converted.append(String(label))
                continue
            }
            let normalized = CanonicalNormalization.composed(label.lowercased())
            guard normalized.unicodeScalars.allSatisfy(isLabelScalar), let encoded = Punycode.encode(Array(normalized.unicodeScalars)) else {
                return nil
            }
            let ascii = "xn--" + encoded
            guard ascii.utf8.count <= 63 else { return nil }
            converted.append(ascii)
        }
        let name = converted.joined(separator: ".")
        return name.utf8.count <= 253 ? name : nil
    }

    /// Whether a scalar may stand in an internationalized label: a letter, a mark or a digit of
    /// any script, or an ASCII letter, digit or `-`; never a space, a control, a format
    /// character or punctuation (which would read as another name's separator).
    private static func isLabelScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let byte = UInt8(scalar.value)
            return (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark, .spacingMark,
            .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }
}

/// Punycode (RFC 3492): a label's Unicode scalars as letters, digits and `-`.
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700

    /// The Punycode of `scalars` (without the `xn--` prefix), or `nil` when it would overflow.
    static func encode(_ scalars: [Unicode.Scalar]) -> String? {
        let codes = scalars.map { Int($0.value) }
        var output: [UInt8] = codes.filter { $0 < 0x80 }.map { UInt8($0) }
        let basic = output.count
        var handled = basic
        if basic > 0 { output.append(UInt8(ascii: "-")) }
        var n = 0x80
        var delta = 0
        var bias = 72
        while handled < codes.count {
            guard let next = codes.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int(Int32.max) - step else { return nil }
            delta += step
            n = next
            for code in codes {
                if code < n { delta += 1 }
                guard code == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basic)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(0x61 + value) : UInt8(0x30 + value - 26)
    }

    private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}

extension URLSyntax {
    /// `string` with its host in ASCII form when it is an internationalized name
    /// (`https://bücher.example/` → `https://xn--bcher-kva.example/`); `string` unchanged when its
    /// host is ASCII or it has no authority; `nil` when the host cannot be a host name.
    static func asciiHost(in string: String) -> String? {
        guard string.utf8.contains(where: { $0 >= 0x80 }), let colon = string.firstIndex(of: ":"),
            string[colon...].hasPrefix("://")
        else { return string }
        let authorityStart = string.index(colon, offsetBy: 3)
        let authorityEnd = string[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? string.endIndex
        let authority = string[authorityStart..<authorityEnd]
        var hostStart = authority.startIndex
        if let at = authority.lastIndex(of: "@") { hostStart = authority.index(after: at) }
        let hostAndPort = authority[hostStart...]
        guard !hostAndPort.hasPrefix("[") else { return string }
        let hostEnd = hostAndPort.lastIndex(of: ":") ?? hostAndPort.endIndex
        let host = hostAndPort[..<hostEnd]
        guard host.utf8.contains(where: { $0 >= 0x80 }) else { return string }
        guard let ascii = InternationalHost.ascii(host) else { return nil }
        return String(string[..<host.startIndex]) + ascii + String(string[host.endIndex...])
    }
}
