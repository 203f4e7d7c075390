@testable import CourierCore
import Testing

/// The one-pass search for many byte strings behind the body redactor's echo pass.
@Suite("Redaction: SecretSearch")
struct SecretSearchTests {
    private func search(_ patterns: [String]) -> SecretSearch { SecretSearch(patterns.map { Array($0.utf8) }) }

    /// What `occurrences` must return, by brute force: every occurrence of every pattern, the
    /// overlapping ones joined.
    private func expected(_ patterns: [[UInt8]], in text: [UInt8], cut: Int?) -> [Range<Int>] {
        var covered: [Range<Int>] = []
        for pattern in patterns where !pattern.isEmpty && pattern.count <= text.count {
            for start in 0...(text.count - pattern.count) where text[start..<start + pattern.count].elementsEqual(pattern) {
                covered.append(start..<start + pattern.count)
            }
        }
        if let cut {
            let longest = patterns.flatMap { pattern in
                (cut..<max(cut, pattern.count)).filter { $0 <= text.count && text.suffix($0).elementsEqual(pattern.prefix($0)) }
            }.max()
            if let longest { covered.append((text.count - longest)..<text.count) }
        }
        var merged: [Range<Int>] = []
        for range in covered.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound < last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    @Test func patternsInsideOtherPatternsAreFoundThroughTheirSuffixes() {
        let found = search(["he", "she", "his", "hers"]).occurrences(in: Array("ushers ahishe".utf8))
        #expect(found == [1..<6, 8..<13])
    }

    @Test func occurrencesThatTouchStayApartAndOverlappingOnesJoin() {
        let search = search(["abab", "ba"])
        #expect(search.occurrences(in: Array("ababab".utf8)) == [0..<6])
        #expect(search.occurrences(in: Array("abab-abab".utf8)) == [0..<4, 5..<9])
        #expect(search.occurrences(in: Array("abababab".utf8)) == [0..<8])
        #expect(self.search(["abcd", "efgh"]).occurrences(in: Array("abcdefgh".utf8)) == [0..<4, 4..<8])
    }

    @Test func theStartOfAPatternAtTheEndIsACutOnlyWhenAsked() {
        let search = search(["secret-value", "sec"])
        #expect(search.occurrences(in: Array("x secret-va".utf8)) == [2..<5])
        #expect(search.occurrences(in: Array("x secret-va".utf8), minimumCutLength: 4) == [2..<11])
        #expect(search.occurrences(in: Array("x sec".utf8), minimumCutLength: 4) == [2..<5])
        #expect(search.occurrences(in: Array("x secr".utf8), minimumCutLength: 5) == [2..<5])
    }

    @Test func anOccurrenceInsideAnOpaquePlaceholderIsNotReported() {
        let search = search(["<reda", "cted>x", "dact"])
        let text = Array("a<redacted>b <reda <redacted>x".utf8)
        #expect(search.occurrences(in: text, opaque: Array("<redacted>".utf8)) == [13..<18, 24..<30])
        #expect(search.occurrences(in: text) == [1..<8, 13..<18, 19..<30])
    }

    @Test func nothingToLookForFindsNothing() {
        #expect(search([]).isEmpty && search(["", ""]).isEmpty)
        #expect(search([]).occurrences(in: Array("anything".utf8), minimumCutLength: 1).isEmpty)
        #expect(!search(["abc"]).occurs(in: []))
        #expect(search(["abc"]).occurrences(in: []).isEmpty)
    }

    /// Random patterns and texts over a small alphabet (so that occurrences overlap, nest and
    /// share prefixes), against the brute-force answer. A fixed seed: the same cases every run.
    @Test func agreesWithABruteForceSearch() {
        var state: UInt64 = 0x5EC2_E75E_A2C4
        func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((mixed ^ (mixed >> 31)) % UInt64(bound))
        }
        let alphabet: [UInt8] = Array("ab\u{E4}".utf8)
        for _ in 0..<2_000 {
            let patterns = (0..<next(6)).map { _ in (0..<(1 + next(6))).map { _ in alphabet[next(alphabet.count)] } }
            let text = (0..<next(40)).map { _ in alphabet[next(alphabet.count)] }
            let cut = next(2) == 0 ? nil : 1 + next(4)
            let search = SecretSearch(patterns)
            #expect(search.occurrences(in: text, minimumCutLength: cut) == expected(patterns, in: text, cut: cut), "\(patterns) in \(text), cut \(String(describing: cut))")
            #expect(search.occurs(in: text) == !expected(patterns, in: text, cut: nil).isEmpty)
        }
    }
}
