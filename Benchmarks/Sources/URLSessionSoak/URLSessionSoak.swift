import Courier
import CourierSoak

/// The soak on URLSession (Benchmarks/soak runs it): mixed traffic against the loopback servers,
/// with the executor a user gets by default.
@main
struct URLSessionSoak {
    static func main() async {
        await Soak.main(named: "URLSession") { URLSessionExecutor() }
    }
}
