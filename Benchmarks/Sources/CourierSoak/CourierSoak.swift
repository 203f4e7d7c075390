import Courier
import CourierConformance

/// The soak on URLSession (Benchmarks/soak runs it): mixed traffic against the loopback servers,
/// with the executor a user gets by default.
@main
struct CourierSoak {
    static func main() async {
        await Soak.main(named: "URLSession") { URLSessionExecutor() }
    }
}
