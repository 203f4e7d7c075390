@testable import CourierCaching
@testable import CourierCore
import Courier
import Foundation
import Testing

/// The disk store: what it keeps survives a new store on the same directory, and what was
/// torn or damaged is never served.
@Suite("HTTP cache: the disk store")
struct DiskCacheStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-disk-cache-\(UUID().uuidString)")

    private func entry(_ url: String, _ body: String = "body", varied: [String: String] = [:]) -> CachedResponse {
        CachedResponse(
            url: url, status: 200, headers: ["Cache-Control": "max-age=60"], body: Data(body.utf8), varied: varied,
            requestTime: Date(timeIntervalSince1970: 1_800_000_000), responseTime: Date(timeIntervalSince1970: 1_800_000_001))
    }

    private func file(for url: String) -> URL { directory.appendingPathComponent(DiskCacheStore.fileName(url)) }

    @Test func whatIsStoredSurvivesANewStoreOnTheDirectory() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory)
        await store.store(entry("https://a.test/x"))
        await store.store(entry("https://a.test/x", "de", varied: ["accept-language": "de"]))
        let reopened = try DiskCacheStore(directory: directory)
        let found = await reopened.responses(for: "https://a.test/x")
        #expect(found.count == 2 && found.first?.body == Data("de".utf8))
        #expect(found.contains(entry("https://a.test/x")))
        await reopened.removeAll(for: "https://a.test/x")
        #expect(await reopened.responses(for: "https://a.test/x").isEmpty)
    }

    @Test(arguments: ["cut", "flipped", "empty", "foreign", "otherURL"])
    func aTornOrDamagedFileIsNeverServedAndIsRemoved(damage: String) async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = "https://a.test/damaged"
        let store = try DiskCacheStore(directory: directory)
        await store.store(entry(url, String(repeating: "payload ", count: 50)))
        let path = file(for: url)
        var data = try Data(contentsOf: path)
        switch damage {
        case "cut": data = data.prefix(data.count / 2)
        case "flipped": data[data.count - 10] ^= 0x01
        case "empty": data = Data()
        case "foreign": data = Data("{\"not\": \"a cache file\"}".utf8)
        default:
            // A well-formed file that holds another URL's response (a name collision).
            let other = try JSONEncoder().encode([entry("https://b.test/other")])
            data = Data("COURIER-CACHE-1\n\(other.count) \(String(DiskCacheStore.checksum(other), radix: 16))\n".utf8) + other
        }
        try data.write(to: path)
        let reopened = try DiskCacheStore(directory: directory)
        #expect(await reopened.responses(for: url).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path.path))
    }

    @Test func theLeastRecentlyUsedFilesGoToStayUnderTheSize() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, maximumSize: 2_000)
        await store.store(entry("https://a.test/1", String(repeating: "a", count: 400)))
        await store.store(entry("https://a.test/2", String(repeating: "b", count: 400)))
        _ = await store.responses(for: "https://a.test/1")
        await store.store(entry("https://a.test/3", String(repeating: "c", count: 400)))
        #expect(await store.size <= 2_000)
        #expect(await store.responses(for: "https://a.test/2").isEmpty)
        #expect(await !store.responses(for: "https://a.test/1").isEmpty)
        await store.store(entry("https://a.test/huge", String(repeating: "h", count: 5_000)))
        #expect(await store.responses(for: "https://a.test/huge").isEmpty)
    }

    @Test func theCacheAnswersFromDiskAfterARelaunch() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = InMemoryExecutor(routes: [.init(.get, "/d", .status(200, headers: ["Cache-Control": "max-age=600"], body: Data("disk".utf8)))])
        let clock = ManualClock()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = origin.eachHop(HTTPCache(store: try DiskCacheStore(directory: directory), clock: clock, start: start))
        _ = try await first.send(.get |> url("https://api.test/d"))
        let relaunched = origin.eachHop(HTTPCache(store: try DiskCacheStore(directory: directory), clock: clock, start: start))
        let hit = try await relaunched.send(.get |> url("https://api.test/d"))
        #expect(hit.cacheStatus == .hit && String(decoding: hit.body, as: UTF8.self) == "disk")
        #expect(origin.requests.count == 1)
    }
}
