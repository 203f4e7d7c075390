@testable import CourierCore
import Foundation

/// Bodies shown as text (logs, HAR files, error snippets), redacted with a request's secret
/// values. The input is secrets, a NUL, then the body. Rules checked beyond "no crash":
/// - no secret is left in the output: not as written, nor as a JSON string would carry it
///   (escaped quotes and backslashes, `\/`, `\uXXXX` for anything outside ASCII or a control
///   character), whole or cut at the end of a truncated body;
/// - a body that is valid JSON stays valid JSON, and every value under a sensitive key is
///   `"<redacted>"`;
/// - the output grows at most linearly with the input.
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
    let masked = output.replacingOccurrences(of: Redaction.placeholder, with: "<>")
    // The values the redactor was given (its own list holds their JSON spellings too).
    let given = secrets.filter { $0.utf8.count >= 4 && $0 != Redaction.placeholder }
    for secret in given where !secret.contains("<") && !secret.contains(">") && !Redaction.placeholder.contains(secret) {
        for form in jsonForms(of: secret) {
            require(!masked.contains(form), "a secret left in the output as \(form.debugDescription)")
        }
    }
    // Linear: a one-byte value becomes `"<redacted>"`, a raw control character inside an echoed
    // body a six-byte escape.
    require(output.utf8.count <= 12 * body.utf8.count + 64, "the output grew past its bound")

    if let json = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]), !truncated {
        guard let redacted = try? JSONSerialization.jsonObject(with: Data(output.utf8), options: [.fragmentsAllowed]) else {
            fail("valid JSON came out invalid")
        }
        _ = json
        checkSensitiveValuesHidden(redacted, redaction: redactor.redaction)
    }
    return 0
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
        case "\u{0}"..."\u{1F}": plain = String(format: "\\u%04x", scalar.value)
        default: plain = String(scalar)
        }
        minimal += plain
        slashes += scalar == "/" ? "\\/" : plain
        if scalar.isASCII {
            lower += plain
            upper += plain
        } else {
            for unit in String(scalar).utf16 {
                lower += String(format: "\\u%04x", unit)
                upper += String(format: "\\u%04X", unit)
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
