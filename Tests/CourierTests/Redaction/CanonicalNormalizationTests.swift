import Foundation
import Testing

@testable import CourierCore

/// Courier's own canonical normalization (``CanonicalNormalization``, which needs no ICU) against
/// two others, scalar by scalar and on sequences whose marks must be reordered or composed: NFD
/// against Foundation's, NFC against the standard library's (`_nfcCodeUnits`, what String
/// comparison uses). Foundation's NFC on Linux is not the reference: it leaves a Hangul LV
/// syllable and a trailing jamo apart (U+AC00 U+11A8), which Unicode (3.12), Python and the
/// standard library compose (U+AC01); `anLVSyllableAndATrailingJamoCompose` holds that.
@Suite("Canonical normalization without Foundation (NFC, NFD)")
struct CanonicalNormalizationTests {
    /// The scalars of `text`, to compare forms by their scalars: `==` on two strings is true for
    /// any two canonically equivalent ones.
    private func scalars(_ text: String) -> [UInt32] { text.unicodeScalars.map(\.value) }

    /// The standard library's NFC of `text`, as scalars.
    private func nfc(_ text: String) -> [UInt32] { scalars(String(decoding: Array(text._nfcCodeUnits), as: UTF8.self)) }

    /// Foundation's ICU may hold an older Unicode than the standard library: a scalar newer than
    /// the oldest Unicode either holds is left out of the comparison with it (and checked below).
    private func comparable(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return false }
        return (age.major, age.minor) <= (15, 1)
    }

    @Test func everyScalarDecomposesAndComposesAsTheReferencesDo() {
        var compared = 0
        var decompositionsDiffering: [String] = []
        var compositionsDiffering: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), comparable(scalar) else { continue }
            let text = String(scalar)
            compared += 1
            if scalars(text.canonicallyDecomposed) != scalars(text.decomposedStringWithCanonicalMapping) {
                decompositionsDiffering.append(String(value, radix: 16))
            }
            if scalars(text.canonicallyComposed) != nfc(text) || scalars(text.canonicallyComposed) != scalars(text.precomposedStringWithCanonicalMapping) {
                compositionsDiffering.append(String(value, radix: 16))
            }
        }
        #expect(compared > 150_000)
        #expect(decompositionsDiffering.isEmpty, "NFD differs for \(decompositionsDiffering.prefix(20))")
        #expect(compositionsDiffering.isEmpty, "NFC differs for \(compositionsDiffering.prefix(20))")
    }

    @Test(arguments: [
        // Marks in canonical order whatever order they came in (dot below 220, circumflex 230).
        "a\u{302}\u{323}", "a\u{323}\u{302}", "\u{1EAD}", "\u{1EA5}\u{323}",
        // A composite whose mark gives way to a lower class (ḋ then dot below is ḍ then dot above).
        "\u{1E0B}\u{323}", "d\u{307}\u{323}",
        // Blocked: a second identical mark does not compose; a starter between blocks it.
        "e\u{301}\u{301}", "e\u{5B0}\u{301}", "e\u{300}\u{315}\u{301}",
        // Hangul: jamo compose into syllables (LV, then LVT), a syllable decomposes into jamo.
        "\u{1100}\u{1161}", "\u{1100}\u{1161}\u{11A8}", "\u{AC00}\u{11A8}", "\u{AC01}", "\u{D7A3}", "\u{1100}\u{1100}\u{1161}",
        // Singletons and exclusions: Ohm and Angstrom decompose and never recompose to themselves.
        "\u{2126}", "\u{212B}", "\u{0958}", "\u{FB2C}", "\u{0344}", "\u{0F73}",
        // Marks with no starter before them, and text around them.
        "\u{301}\u{300}a", "t\u{0}k\u{301}n", "x\u{1F3F}y", "Å\u{301}ﬃ", "🧑\u{200D}💻é",
    ])
    func sequencesNormalizeAsTheReferencesDo(_ text: String) {
        #expect(scalars(text.canonicallyDecomposed) == scalars(text.decomposedStringWithCanonicalMapping))
        #expect(scalars(text.canonicallyComposed) == nfc(text))
    }

    @Test func anLVSyllableAndATrailingJamoCompose() {
        #expect(scalars("\u{AC00}\u{11A8}".canonicallyComposed) == [0xAC01])
        #expect(nfc("\u{AC00}\u{11A8}") == [0xAC01])
        #expect(scalars("\u{AC00}\u{11A8}".canonicallyDecomposed) == [0x1100, 0x1161, 0x11A8])
    }

    @Test func randomMarkSequencesNormalizeAsTheReferencesDo() {
        // Starters that compose and combining marks of several classes, in a fixed pseudo-random
        // mix: the reordering and blocking rules on inputs no list above thought of.
        let pool: [Unicode.Scalar] = [
            "a", "e", "o", "u", "A", "s", "\u{1100}", "\u{1161}", "\u{11A8}", "\u{AC00}", "\u{3B1}", "\u{3C9}", "\u{928}", "\u{93C}",
            "\u{300}", "\u{301}", "\u{302}", "\u{303}", "\u{308}", "\u{30A}", "\u{313}", "\u{314}", "\u{323}", "\u{327}",
            "\u{328}", "\u{331}", "\u{345}", "\u{5B0}", "\u{315}", "\u{1DCE}", "\u{3099}", "\u{309A}", "\u{304B}", "\u{CF}",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        var differing: [String] = []
        for _ in 0..<5_000 {
            var view = String.UnicodeScalarView()
            for _ in 0..<(1 + next() % 7) { view.append(pool[next() % pool.count]) }
            let text = String(view)
            if scalars(text.canonicallyDecomposed) != scalars(text.decomposedStringWithCanonicalMapping)
                || scalars(text.canonicallyComposed) != nfc(text) {
                differing.append(text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
            }
        }
        #expect(differing.isEmpty, "differs for \(differing.prefix(10))")
    }

    @Test func unicode16CompositesAreInTheTable() {
        // Composites new in Unicode 16.0 (Tulu-Tigalari, Kirat Rai, Gurung Khema, Todhri), which an older
        // ICU does not know: decomposed and composed back by the table.
        for (composite, parts) in [
            (0x1_1383 as UInt32, [0x1_1382 as UInt32, 0x1_13C9]), (0x1_6D68, [0x1_6D67, 0x1_6D67]),
            (0x1_6121, [0x1_611E, 0x1_611E]), (0x1_05C9, [0x1_05D2, 0x307]),
        ] {
            guard let scalar = Unicode.Scalar(composite) else {
                Issue.record("U+\(String(composite, radix: 16)) is no scalar")
                continue
            }
            let text = String(scalar)
            #expect(scalars(text.canonicallyDecomposed) == parts, "U+\(String(composite, radix: 16))")
            #expect(scalars(text.canonicallyDecomposed.canonicallyComposed) == [composite], "U+\(String(composite, radix: 16))")
        }
    }

    @Test func asciiIsItsOwnFormAndEmptyStaysEmpty() {
        #expect("Bearer s3cr3t-token".canonicallyComposed == "Bearer s3cr3t-token")
        #expect("".canonicallyDecomposed.isEmpty)
    }
}
