#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where an API key is sent.
public enum APIKeyLocation: Sendable, Hashable {
    /// In a header with this name.
    case header(HeaderName)
    /// In a query parameter with this name.
    case query(String)
}

/// Sets `Authorization: Bearer <token>` ([RFC 6750](https://www.rfc-editor.org/rfc/rfc6750)).
///
/// The token is never shown in descriptions, logs or errors.
/// - Parameter token: The access token.
/// - Returns: The builder.
@inlinable
public func bearer(_ token: String) -> RequestBuilder {
    header(.authorization, "Bearer " + token)
}

/// Sets `Authorization: Basic …` ([RFC 7617](https://www.rfc-editor.org/rfc/rfc7617)) from a user
/// name and password, encoded as UTF-8 then Base64.
///
/// A user name containing `:` cannot be sent in this scheme and is reported as a
/// ``RequestProblem/Kind/invalidCredentials`` problem.
/// - Parameters:
///   - username: The user name; must not contain `:`.
///   - password: The password.
/// - Returns: The builder.
public func basic(username: String, password: String) -> RequestBuilder {
    guard !username.contains(":") else {
        return { request in
            var request = consume request
            request.record(RequestProblem(.invalidCredentials, "a Basic user name must not contain ':' (RFC 7617)"))
            return request
        }
    }
    let encoded = Data((username + ":" + password).utf8).base64EncodedString()
    return header(.authorization, "Basic " + encoded)
}

/// Sends an API key in a header (by default `X-API-Key`) or a query parameter, and marks that
/// header or parameter as sensitive so the key is never shown in descriptions, logs or errors.
/// - Parameters:
///   - key: The API key.
///   - location: Where to send it.
/// - Returns: The builder.
public func apiKey(_ key: String, in location: APIKeyLocation = .header("X-API-Key")) -> RequestBuilder {
    switch location {
    case .header(let name):
        return header(name, key, sensitive: true)
    case .query(let name):
        return { request in
            var request = consume request
            var item = QueryItem(name: name, value: key)
            item.isSensitive = true
            request.appendQueryItem(item)
            request.redaction.insert(queryName: name)
            return request
        }
    }
}
