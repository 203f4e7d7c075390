/// An HTTP request method, such as `GET` or `POST`.
///
/// Methods are an open set: the common ones are static members (`.get`, `.post`, …) and any other
/// token can be written as a string literal or with ``init(rawValue:)``. A method that is not a
/// valid token ([RFC 9110 §9.1](https://www.rfc-editor.org/rfc/rfc9110#section-9.1)) is reported as a
/// ``RequestProblem`` when the request is rendered or sent, so it can never inject text into the
/// request line.
///
/// ```swift
/// let purge: HTTPMethod = "PURGE"
/// let request = Request.get |> method(purge)
/// ```
public struct HTTPMethod: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The method name exactly as it is sent. Methods are case-sensitive.
    public let rawValue: String

    /// Creates a method from its name. The name is validated when the request is rendered.
    /// - Parameter rawValue: The method name, for example `"GET"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
        self.isValid = HTTPSyntax.isToken(rawValue)
    }

    /// Creates a method from a string literal.
    /// - Parameter value: The method name.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The method name.
    public var description: String { rawValue }

    /// `GET`: transfer a current representation of the target resource.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`: like `GET`, but the server sends no body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`: process the enclosed representation.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`: replace the target resource with the enclosed representation.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`: apply a partial modification ([RFC 5789](https://www.rfc-editor.org/rfc/rfc5789)).
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`: remove the target resource.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`: describe the communication options for the target resource.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `TRACE`: perform a message loop-back test.
    public static let trace = HTTPMethod(rawValue: "TRACE")
    /// `CONNECT`: establish a tunnel to the server.
    public static let connect = HTTPMethod(rawValue: "CONNECT")

    /// Whether the method is idempotent as defined by
    /// [RFC 9110 §9.2.2](https://www.rfc-editor.org/rfc/rfc9110#section-9.2.2).
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// Whether the name is a valid RFC 9110 token, and so safe to put on the request line.
    public let isValid: Bool
}
