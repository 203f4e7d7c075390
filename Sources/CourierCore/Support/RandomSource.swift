/// A shareable source of random numbers: the system generator, or a seeded one whose sequence
/// repeats, so tests of jittered backoff are deterministic.
///
/// ```swift
/// let jitter = RandomSource.seeded(42)
/// jitter.fraction()   // the same value on every run
/// var source = RandomSource.seeded(7)
/// Int.random(in: 1...6, using: &source)   // usable wherever a generator is
/// ```
public final class RandomSource: RandomNumberGenerator, Sendable {
    private let generator: Locked<any RandomNumberGenerator>

    private init(_ generator: any RandomNumberGenerator) {
        self.generator = Locked(generator)
    }

    /// The system's cryptographically secure generator.
    public static var system: RandomSource { RandomSource(SystemRandomNumberGenerator()) }

    /// A deterministic generator (SplitMix64) starting from `seed`.
    /// - Parameter seed: The seed; equal seeds give equal sequences on every platform.
    /// - Returns: The source.
    public static func seeded(_ seed: UInt64) -> RandomSource { RandomSource(SplitMix64(state: seed)) }

    /// The next 64 random bits.
    public func next() -> UInt64 {
        generator.withLock { $0.next() }
    }

    /// A uniformly distributed value in `0...1`.
    public func fraction() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }

    private struct SplitMix64: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
