import CourierNIO
import CourierSoak

/// The soak on Courier's own transport (Benchmarks/soak runs it): mixed traffic against the
/// loopback servers, through the shared executor a user gets in one line.
@main
struct CourierNIOSoak {
    static func main() async {
        await Soak.main(named: "CourierNIO") { NIOExecutor.shared }
    }
}
