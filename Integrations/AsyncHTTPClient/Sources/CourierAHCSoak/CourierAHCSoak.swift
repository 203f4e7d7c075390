import CourierAsyncHTTPClient
import CourierSoak

/// The soak on AsyncHTTPClient (Benchmarks/soak runs it): mixed traffic against the loopback
/// servers, through the shared executor a user gets in one line.
@main
struct CourierAHCSoak {
    static func main() async {
        await Soak.main(named: "AsyncHTTPClient") { AsyncHTTPClientExecutor.shared }
    }
}
