// fuzz: seeded-runs 3000
@testable import CourierCore
import Foundation

/// Bodies shown as text (logs, HAR files, error snippets), redacted with a request's secret
/// values. The input is secrets, a NUL, then the body. Rules checked beyond "no crash":
/// - no secret is left in the output, searched as bytes (so also inside a grapheme cluster):
///   not as written, in its composed or decomposed form (NFC, NFD), nor as a JSON string would
///   carry any of those (escaped quotes and backslashes, `\/`, `\uXXXX` for anything outside
///   ASCII or a control character), whole or cut at the end of a truncated body;
/// - a body that is valid JSON (in UTF-8: no NUL byte, which Foundation would read as UTF-16)
///   stays valid JSON, and every value under a sensitive key is `"<redacted>"`;
/// - the output grows at most linearly with the input;
/// - a body that JSON's grammar (`JSONSyntax`) accepts, Foundation's parser reads.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    let split = input.firstIndex(of: 0) ?? 0
    let secrets = String(decoding: input[..<split], as: UTF8.self).split(separator: "\u{1}").map(String.init)
    let body = String(decoding: input[(split == 0 ? 0 : split + 1)...], as: UTF8.self)
    let redactor = BodyRedactor(redaction: Redaction(), secrets: secrets)
    let truncated = body.utf8.count % 2 == 1
    let output = withinBudget("BodyRedactor") { redactor.redact(body, truncated: truncated) }

    // Placeholders masked so that a secret cannot be "found" across one.
    let masked = replacing(Array(Redaction.placeholder.utf8), with: Array("<>".utf8), in: Array(output.utf8))
    // The values the redactor was given (its own list holds their other spellings too).
    let given = secrets.filter { $0.utf8.count >= 4 && $0 != Redaction.placeholder }
    let placeholder = Array(Redaction.placeholder.utf8)
    // Each spelling once, told apart by bytes (Strings in other normal forms compare equal).
    var spellings = Set<[UInt8]>()
    for secret in given
    where !secret.utf8.contains(UInt8(ascii: "<")) && !secret.utf8.contains(UInt8(ascii: ">"))
        && firstRange(of: Array(secret.utf8), in: placeholder) == nil
    {
        for normal in [secret, secret.precomposedStringWithCanonicalMapping, secret.decomposedStringWithCanonicalMapping] {
            for form in jsonForms(of: normal) { spellings.insert(Array(form.utf8)) }
        }
    }
    for spelling in spellings {
        require(firstRange(of: spelling, in: masked) == nil, "a secret left in the output as \(String(decoding: spelling, as: UTF8.self).debugDescription)")
    }
    // Linear: a one-byte value becomes `"<redacted>"`, a raw control character inside an echoed
    // body a six-byte escape.
    require(output.utf8.count <= 12 * body.utf8.count + 64, "the output grew past its bound")

    // What JSON's grammar accepts (the redactor's quick check), Foundation's parser reads.
    // JSON is the text's own, in UTF-8: text with a NUL byte is not JSON, though Foundation
    // reads it as UTF-16 or UTF-32 (`BodyRedactorTests.textWithANULByteIsNotJSONEvenWhere…`).
    let parsed = body.utf8.contains(0) ? nil : try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])
    require(!JSONSyntax.isValid(Array(body.utf8)) || parsed != nil, "the grammar accepted what Foundation refuses")
    if let json = parsed, !truncated {
        guard let redacted = try? JSONSerialization.jsonObject(with: Data(output.utf8), options: [.fragmentsAllowed]) else {
            fail("valid JSON came out invalid")
        }
        _ = json
        checkSensitiveValuesHidden(redacted, redaction: redactor.redaction)
    }
    return 0
}

/// Where `needle` first occurs in `haystack` at or after `from`, by bytes (a plain search,
/// independent of the redactor's own).
private func firstRange(of needle: [UInt8], in haystack: [UInt8], from: Int = 0) -> Range<Int>? {
    guard !needle.isEmpty, from + needle.count <= haystack.count else { return nil }
    for start in from...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<start + needle.count].elementsEqual(needle) { return start..<start + needle.count }
    }
    return nil
}

/// `haystack` with every `needle` replaced, left to right.
private func replacing(_ needle: [UInt8], with replacement: [UInt8], in haystack: [UInt8]) -> [UInt8] {
    var result: [UInt8] = []
    var copied = 0
    while let range = firstRange(of: needle, in: haystack, from: copied) {
        result += haystack[copied..<range.lowerBound]
        result += replacement
        copied = range.upperBound
    }
    return result + haystack[copied...]
}

private func hex(_ value: UInt32, uppercase: Bool) -> String {
    let digits = String(value, radix: 16, uppercase: uppercase)
    return "\\u" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

/// `secret` as written and as JSON encoders write it inside a string.
private func jsonForms(of secret: String) -> Set<String> {
    var minimal = "", slashes = "", lower = "", upper = ""
    for scalar in secret.unicodeScalars {
        let plain: String
        switch scalar {
        case "\"": plain = "\\\""
        case "\\": plain = "\\\\"
        case "\n": plain = "\\n"
        case "\r": plain = "\\r"
        case "\t": plain = "\\t"
        case "\u{0}"..."\u{1F}": plain = hex(scalar.value, uppercase: false)
        default: plain = String(scalar)
        }
        minimal += plain
        slashes += scalar == "/" ? "\\/" : plain
        if scalar.isASCII {
            lower += plain
            upper += plain
        } else {
            for unit in String(scalar).utf16 {
                lower += hex(UInt32(unit), uppercase: false)
                upper += hex(UInt32(unit), uppercase: true)
            }
        }
    }
    return [secret, minimal, slashes, lower, upper]
}

private func checkSensitiveValuesHidden(_ value: Any, redaction: Redaction) {
    if let object = value as? [String: Any] {
        for (key, child) in object {
            if redaction.isSensitive(fieldName: key) {
                require(child as? String == Redaction.placeholder, "the value of \(key.debugDescription) is not hidden")
            } else {
                checkSensitiveValuesHidden(child, redaction: redaction)
            }
        }
    } else if let array = value as? [Any] {
        for child in array { checkSensitiveValuesHidden(child, redaction: redaction) }
    }
}
