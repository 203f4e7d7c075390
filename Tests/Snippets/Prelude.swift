// What the README's and the DocC articles' snippets assume a reader already has: a model, a token,
// an executor. Only declarations: scripts/check-snippets compiles each snippet as the body of a
// function with these in scope, and with PreludeCore.swift (Courier's own snippets) or
// PreludeIntegrations.swift (the integrations', where `Logger` is swift-log's).
import Courier
import Foundation

struct User: Codable, Hashable, Sendable {
    var id: Int
    var name: String
}

struct APIError: Codable, Error, Sendable {
    var message: String
}

struct Draft: Decodable, Sendable {}

/// A page of a cursor-paginated listing.
struct Listing: Decodable, Sendable {
    var items: [User]
    var nextCursor: String?
}

struct TokenStore: Sendable {
    func refresh() async throws -> String { "new-token" }
}

let token = "token"
let password = "password"
let key = "key"
let userID = 42
let nextCursor: String? = nil
let newUser = User(id: 1, name: "Ada")
let pngData = Data()
let fixtureURL = URL(fileURLWithPath: "/tmp/fixture.har")
let photoURL = URL(fileURLWithPath: "/tmp/photo.jpg")
let backupFile = URL(fileURLWithPath: "/tmp/backup.tar")
let destination = URL(fileURLWithPath: "/tmp/backup-copy.tar")
let companyCAFile = URL(fileURLWithPath: "/etc/ssl/company-ca.pem")
let clientPEM = URL(fileURLWithPath: "/etc/ssl/client.pem")
let clientKey = URL(fileURLWithPath: "/etc/ssl/client-key.pem")
let expectedDigest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

/// One streamed chunk of a chat answer.
struct ChatDelta: Decodable, Sendable {
    var text: String
}
let tokens = TokenStore()
let api: RequestBuilder = baseURL("https://api.example.com/v1")
let executor = InMemoryExecutor { _ in .status(204) }
let users: Resource<[User]> = .get |> api |> path("users") |> decode([User].self)
let listing: Resource<Listing> = .get |> api |> path("users") |> decode(Listing.self)
let user = .get |> api |> path("users", 42) |> decode(User.self)
let withErrors = .get |> api |> path("users", 42) |> decode(User.self, error: APIError.self)

/// An event of a feed, with the cursor it can be resumed after.
struct Event: Decodable, Sendable {
    var id: String
}
func handle(_ event: Event) async throws {}

func show(_ value: Any) {}
func showNotFound() {}
func showOffline() {}
func report(_ error: any Error) {}

/// A transport of the reader's own: one hop, as ``Transport`` asks.
struct MyTransport: Transport {
    func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        StreamedResponse(status: 204, body: ByteStream(Data()))
    }
}
