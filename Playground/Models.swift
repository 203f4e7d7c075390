import Foundation

/// What httpbin's `/anything` echoes, and what the offline server imitates.
struct Echo: Codable, Sendable {
    var method: String
    var url: String
    var args: [String: String]
    var headers: [String: String]
    var form: [String: String]
    var json: Note?
}

/// A small JSON body the tour sends.
struct Note: Codable, Sendable, Equatable {
    var title: String
    var body: String
}

/// httpbin's `/bearer` answer.
struct BearerCheck: Codable, Sendable {
    var authenticated: Bool
    var token: String
}

/// One line of httpbin's `/stream/N`.
struct StreamLine: Codable, Sendable {
    var id: Int
    var url: String
}

/// One server-sent event of the chat stream.
struct ChatDelta: Codable, Sendable {
    var text: String
}

/// What httpbin's `/cookies` echoes.
struct CookieEcho: Decodable, Sendable {
    var cookies: [String: String]
}
