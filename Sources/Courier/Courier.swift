// Courier for apps: the core (requests, builders, resources, executors, middleware, streaming),
// the cache, the cookie jar, resilience, the test kit and the URLSession transport, behind one
// `import Courier`.
//
// A server that sends through another transport (CourierAsyncHTTPClient) imports `CourierCore`
// alone and links no FoundationNetworking (libcurl).
@_exported import CourierCore
@_exported import CourierCaching
@_exported import CourierCookies
@_exported import CourierResilience
@_exported import CourierTesting
@_exported import CourierURLSession
@_exported import CourierWebSocket
