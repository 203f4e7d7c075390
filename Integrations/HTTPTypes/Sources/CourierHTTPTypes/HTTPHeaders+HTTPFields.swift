import CourierCore
import HTTPTypes

extension CourierCore.HTTPHeaders {
    /// Courier's headers from swift-http-types' fields: every field in order, repeats kept, and
    /// fields whose indexing strategy is `.disallow` (HTTP/2 and HTTP/3 never index them: secrets)
    /// marked sensitive, so descriptions, logs and errors hide them.
    /// - Parameter httpFields: The fields.
    public init(httpFields: HTTPFields) {
        var fields: [Field] = []
        fields.reserveCapacity(httpFields.count)
        var sensitive: [HeaderName] = []
        for field in httpFields {
            let name = HeaderName(rawValue: field.name.rawName)
            fields.append(Field(name: name, value: field.value))
            if field.indexingStrategy == .disallow { sensitive.append(name) }
        }
        self.init(fields)
        for name in sensitive { markSensitive(name) }
    }

    /// These headers as swift-http-types' fields, in order with repeats kept (`HTTPFields` joins
    /// repeated `Cookie` fields with `; ` and others with `, ` only when read by name). Fields
    /// marked sensitive here, or standard credentials (`Authorization`, `Cookie`, …), get the
    /// indexing strategy `.disallow`.
    ///
    /// Checked first: `HTTPField` would turn a byte that is not allowed in a value into a space
    /// (and a name that is not a token cannot be made at all), so a header that cannot travel
    /// unchanged is an error here, never silently altered.
    /// - Parameter redaction: What else counts as sensitive (a request's own ``/Courier/Redaction``).
    /// - Returns: The fields.
    /// - Throws: ``/Courier/CourierError`` with ``/Courier/CourierError/Cause/invalidRequest(_:)``
    ///   naming the header (never its value).
    public func httpFields(redaction: Redaction = Redaction()) throws(CourierError) -> HTTPFields {
        var converted = HTTPFields()
        converted.reserveCapacity(count)
        var problems: [RequestProblem] = []
        for (index, field) in fields.enumerated() {
            guard field.name.isValid, let name = HTTPField.Name(field.name.rawValue) else {
                problems.append(RequestProblem(.invalidHeaderName, "header \(index) has a name that is not a token: \(field.name.rawValue.debugDescription)"))
                continue
            }
            guard HTTPField.isValidValue(field.value) else {
                problems.append(RequestProblem(.invalidHeaderValue, "the value of \(field.name.rawValue) has a byte HTTP does not allow in a field value"))
                continue
            }
            var made = HTTPField(name: name, value: field.value)
            if sensitiveNames.contains(field.name) || redaction.isSensitive(header: field.name) { made.indexingStrategy = .disallow }
            converted.append(made)
        }
        guard problems.isEmpty else { throw CourierError(.invalidRequest(problems)) }
        return converted
    }
}
