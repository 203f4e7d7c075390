import Courier
import Foundation
import Testing

@testable import CourierWebSocket

/// permessage-deflate (RFC 7692): the inflater against zlib's output, the deflater through the
/// inflater, the negotiation's rules, and a socket that compresses both ways in memory.
@Suite("WebSocket compression (permessage-deflate)", .timeLimit(.minutes(2)))
struct CompressionTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return result
    }

    /// A message's payload inflated as the socket does: with `00 00 FF FF` put back.
    static func inflate(_ inflater: inout Inflater, _ payload: [UInt8], limit: Int = 1 << 24, keepsWindow: Bool = true)
        throws(Inflater.Failure) -> [UInt8]
    {
        try inflater.inflate(payload + [0, 0, 0xFF, 0xFF], limit: limit, keepsWindow: keepsWindow)
    }

    /// 12,730 bytes of JSON lines; zlib (level 6, window 15) compressed them to the dynamic
    /// block below, with a sync flush and its tail left off.
    static let jsonLines = Array(
        (0..<200).map { line in #"{"id":\#(line),"name":"user \#(line * 7)","active":true,"tags":["a","b","c"]}"# + "\n" }.joined().utf8)
    static let jsonLinesByZlib = bytes("94da3d6e14411040e19c53a0891d74f57ffb2a88c0180b1140003609e2ee94c8f66dc20b488caa254b9f77a7facdefebebe7ebb13c5cdf9fbebd5c8fd7dbcf971fefcbf5703d3dbf7efd953f79fdf1f6f270bd3e7df9793d7eb89ef27f3ee5bfe7ebe39f77bfffcdc6edec32b3f57636ba196eb7c335cc70c7f036c3e376b80d333c6f877b35c30bc3c70cefdbe131cdf0b91d9e4d1901b0e5849198321640b615b280b2a39405981dc52ce02c8a82169016a1a8c5e2b8c216d01655710b788ba6c0d5c24f1625ae06c7ddc71a3fd7863257612ea642573bc795ba4a754ba9ab54b795ba4a755ba9ab547794ba0a75b52875adf02b49a96bc171a5ae415dadeeeb94dfa74da96bfc466d4a5d83bada95ba06757528756d715ca96b5057a752d7a86e29759deab652d7a96e2b759dea8e52d7a1ae15f718d739aed4753ec98552d7a1ae55a5ae2f8e2b751dea5a53ea3ad4b5aed40da86b43a91bc171a56e405d9b4adda0baa5d40daa5b6e7da0baadd40daa3b4adda0baa3d40da8eb45a91b50d743a99b50d7ab523783e34add84bade94ba0975bd2b75b3735ca99b50d7875b5bb9b74ea56e72739d4adda4baa5d44daadb4adda2baa3d42daa3b4add82ba5194ba05752394bad539aed42da81b55a95b50379abb2e591c57ea166f4cba52b7a06e0ca56e43dd984add0e8e2b759bea9652b7a96e2b759beab652b7a9ee28751bea6651eaf6e2b8bba683ba194adde64d5d55ea0ed4cda6d49de0b85277a06e76a5ee40dd1c4adde91c57ea0ed4cda9d41daa5b4adda1baa5d41daadbee7a98ea8ebc20bebb217657c48577c4c55d1217c05bae454481bce5724494ce7977555c606fb9281105f896eb125116e7dd6d7101bfe5ea4414f85b3250dc150a9b28ee1a85f3c74ab164a660a7583254b0542c992ad82ab66c158c155bc60ad68a2d6b0573c596b982bd62bb5e110c16db058b60b1d8ae580493c576c922d82cb66b16c168b15db408568bedaa45305b6c972d82dd62bb6e110c17db858b60b938ae5c04d3c571e922d82e8e6b17c178715cbc08d68be3ea45305f1c972f82fde2b87e110c18c7058c60c138ae600413c6710923d8308e6b18c188715cc408568ce32a4630631c9731821d231f68e59b02acb6c5a58c60cbc84762479035239f899d41f68c3cc02164d1c8a76aa7904d231fab1d43568d7cae760ed935f200079165239fcc9d44b68d7c3477125937f200f9daca9d4417388285239fee9d44368e3cc04964e5c8fdc04964e7c805c14964e9c80dc14964ebc8039c44d68efc0d9c44f68e5c329c44168f3cc04964f3c83545be4275f70e95cb1ec1ee910738892c1fb9e938896c1fb9ea3889ac1fb9eb3889ec1f798093c802927f0a4e221b48ae4b4e222b481ee024b283e4c2e524b284e4c6255fe7a3c4ea6248b086e4cee624b287e4d2e624b288e4d6e624b289e4014e22ab487ea63a89ec22b9f839892c23798093c83692aba393c83a92bba393c83e9207c8574b29b1b944126c24b97e3a89ac24b97f3a89ec24798093c852925fce4e225b49aeb04e226b491ee024b297e412ec24b298e416ec24b299e4014e22ab49eed1f235e73b89ff1b4efe02")

    @Test("zlib's output inflates: RFC 7692's examples (fixed, stored, final block, context taken over) and dynamic blocks")
    func zlibVectors() throws {
        var inflater = Inflater()
        // RFC 7692 §7.2.3.1 and §7.2.3.2: "Hello", then again with the window of the first.
        #expect(try Self.inflate(&inflater, Self.bytes("f248cdc9c90700")) == Array("Hello".utf8))
        #expect(try Self.inflate(&inflater, Self.bytes("f200110000")) == Array("Hello".utf8))
        // Without the window the second refers to bytes that are not there.
        var fresh = Inflater()
        #expect(throws: Inflater.Failure.self) { try Self.inflate(&fresh, Self.bytes("f200110000")) }
        // §7.2.3.3 (a stored block) and §7.2.3.4 (a block marked final).
        #expect(try Self.inflate(&fresh, Self.bytes("000500faff48656c6c6f00")) == Array("Hello".utf8))
        #expect(try Self.inflate(&fresh, Self.bytes("f348cdc9c9070000")) == Array("Hello".utf8))
        // Dynamic codes: Huffman only, and matches.
        #expect(
            try Self.inflate(&fresh, Self.bytes("04c1310100000803a02a56639a60fd0f416a9dd448ad937a00"))
                == Array("abracadabra abracadabra".utf8))
        #expect(try Self.inflate(&fresh, Self.jsonLinesByZlib) == Self.jsonLines)
    }

    @Test("a code longer than nine bits read when fewer than its length are in hand (found by the fuzz target WebSocketInflate)")
    func longCodes() throws {
        // zlib, Huffman codes only, on 559 bytes skewed toward small values: codes of up to
        // 15 bits, one of which used to meet a bit buffer holding 9 to 14.
        let data = Self.bytes("010402010101042902021b010103ff01ff020101010101010103010104160603120304010101020105e007030107288002020105060103020104010301040126010d0104030501021001020a020101230104010101070102d20102010106022801010101040105020206050e05010101010a0111080403025b7b0107010206015c01040602010104010501020201011701ff03010a05390f05010e03090104020338030202040901010407010101011b050508900103043102021601081a0e020206030102030102010205070202071002020104010101010101060403030101038b01010101040202010201012315020304012d03060301020101010101010a02a016020e01010102030303030203010222050404011206020115040204030101010107010209010302020805010104010101280202160a010401ff034901040101010102010101120101010123012c03030e011002030303060101240602010208010a02030e010301193f020201021402010206011d190dff040109010102010e08080101010101160d060105020201020204020501010414045102010201010102040102032a01020e75020102010104110801010113010a02010c0102be04020904040108020111120501010b010102020106010203020202010104040202050203570801ff240101020210ff036c0103630101024c01030315010106010d01ff0601ff0304080102020202020504010101010116090107010e1501051b06ff06010f02060401020501040202")
        let compressed = Self.bytes("04c1316e15671406509defdeff9f790f3c7e76ec878c9526b622274a0a3a525123d150a548bab4b45434f4342c8195b088ac203b999ca383fe25b9a7767b00459f675d5723c67f4b599e3e27c654d14afbd985ae21273986078d45fe15669ea08d648e6dc0d1d5da95bf3e5964fa5bcfd0868417f6721c7f5c0e5b1d74ea75257da017b81f63fdaafa5572b6bedc9259522263499653a281d955d417e84478b84db5df6b9600c77c3b6743aaaa52f2d3e8763de3b6d3058b1c54b20e1a4fc9f9a8edf55643700d0f7eabda9c525593c719591d539b72f726919bc8f4e3ddc5de0ec4b6aee07c318d44d219f44dbf8f202df5ab6c1f23f4d58a1f1ce3b97cef1cbaad71753d7846624a25a13b19a93f57fb23c969af0fea1ff24ed52dd3857ddaab574992d1e07cb0d86e8dfbb94f97992d4327ff03")
        var inflater = Inflater()
        #expect(try Self.inflate(&inflater, compressed) == data)
    }

    @Test("the window reaches back 32 KiB across messages, before and after the kept output is cut back; a large message leaves only the window")
    func windowAcrossMessages() throws {
        var generator = SystemRandomNumberGenerator()
        var inflater = Inflater()
        var everything: [UInt8] = []
        // Stored messages of 30,000 bytes each, then one back-reference of 258 bytes from exactly
        // 32 KiB back, five times over: the kept output passes 64 KiB and is cut back meanwhile.
        for _ in 0..<5 {
            for _ in 0..<3 {
                let data = (0..<30_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
                // Not final, stored, 30,000 bytes; then a sync flush's header (its LEN and NLEN,
                // 00 00 FF FF, are what the receiver appends).
                let stored = [0x00, 0x30, 0x75, 0xCF, 0x8A] + data + [0x00]
                #expect(try Self.inflate(&inflater, stored) == data)
                everything += data
            }
            let expected = Array(everything[(everything.count - 32_768)..<(everything.count - 32_768 + 258)])
            #expect(try Self.inflate(&inflater, Self.farthestMatch) == expected)
            everything += expected
            #expect(inflater.keptBytes <= 2 * Inflater.windowSize)
        }
        // A large message leaves only the window behind, not its own size.
        #expect(try Self.inflate(&inflater, Deflater.compress([UInt8](repeating: 3, count: 1 << 20))).count == 1 << 20)
        #expect(inflater.keptBytes == Inflater.windowSize)
        // A fresh inflater has nothing 32 KiB back.
        var fresh = Inflater()
        #expect(throws: Inflater.Failure.self) { try Self.inflate(&fresh, Self.farthestMatch) }
    }

    /// One fixed-code block (RFC 1951 §3.2.6) holding one match: length 258 from 32,768 bytes
    /// back, then the end of the block and a sync flush's header.
    static let farthestMatch: [UInt8] = {
        var bits: [Bool] = []
        func value(_ value: Int, _ count: Int) { for bit in 0..<count { bits.append(value >> bit & 1 == 1) } }
        func code(_ code: Int, _ count: Int) { for bit in (0..<count).reversed() { bits.append(code >> bit & 1 == 1) } }
        value(0b010, 3)  // not final, fixed codes
        code(0xC5, 8)  // length symbol 285: 258
        code(29, 5)  // distance code 29: 24,577 and 13 extra bits
        value(32_768 - 24_577, 13)
        code(0, 7)  // end of block
        value(0, 3)  // the sync flush's empty stored block, padded to a byte
        while bits.count % 8 != 0 { bits.append(false) }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: bits.count, by: 8) {
            var byte: UInt8 = 0
            for bit in 0..<8 where bits[start + bit] { byte |= UInt8(1) << UInt8(bit) }
            bytes.append(byte)
        }
        return bytes
    }()

    @Test("what the deflater writes inflates to itself, within the window it was given", arguments: [8, 9, 12, 15])
    func roundTrip(windowBits: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<5_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let repetitive = Array(String(repeating: "the quick brown fox, ", count: 2_000).utf8)
        let runs = [UInt8](repeating: 7, count: 100_000)
        let inputs: [[UInt8]] = [[], [1], [1, 2, 3], random, repetitive, runs, Self.jsonLines, random + repetitive + random]
        for input in inputs {
            let compressed = Deflater.compress(input, windowBits: windowBits)
            // A window smaller than what the inflater keeps must still be held: inflate with a
            // fresh inflater whose history is exactly this message.
            var inflater = Inflater()
            #expect(try Self.inflate(&inflater, compressed, keepsWindow: false) == input)
            #expect(Self.farthestReference(compressed) <= 1 << windowBits)
        }
        #expect(Deflater.compress(Self.jsonLines).count < Self.jsonLines.count / 5)
        // Past what the matcher takes, stored blocks: still valid, one or several.
        for input in [[], [UInt8](repeating: 9, count: 65_535), (0..<150_000).map { UInt8(truncatingIfNeeded: $0) }] {
            var inflater = Inflater()
            #expect(try Self.inflate(&inflater, Deflater.stored(input), keepsWindow: false) == input)
        }
        #expect(Deflater.compress(runs).count < 1_000)
    }

    @Test("each part of a message goes in the smallest kind of block: codes fitted to it, the fixed codes for a few bytes, stored bytes that do not compress")
    func blockKinds() throws {
        // JSON lines: one block with codes of its own, within 5% of zlib's default level.
        let json = Deflater.compress(Self.jsonLines)
        #expect(Self.blockKinds(json) == [2])
        #expect(json.count * 20 <= Self.jsonLinesByZlib.count * 21, "\(json.count) bytes, zlib \(Self.jsonLinesByZlib.count)")
        // A few bytes: a header of codes would cost more than it saves.
        #expect(Self.blockKinds(Deflater.compress([1, 2, 3])) == [1])
        // Nothing: the sync flush alone, one byte (RFC 7692 §7.2.3.6).
        #expect(Deflater.compress([]) == [0x00])
        // Random bytes: stored, at most five bytes a block more than themselves (and the flush).
        var generator = SystemRandomNumberGenerator()
        let random = (0..<50_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let stored = Deflater.compress(random)
        #expect(Set(Self.blockKinds(stored)) == [0])
        #expect(stored.count <= random.count + 5 * (random.count / DeflateBlocks.blockSymbols + 1) + 1)
        var inflater = Inflater()
        #expect(try Self.inflate(&inflater, stored, keepsWindow: false) == random)
        // Random bytes, then text: stored blocks first, coded ones at the end; and the same with
        // the context taken over, the text referring back into the message before.
        let mixed = Array(random.prefix(40_000)) + Self.jsonLines + Self.jsonLines
        let parts = Deflater.compress(mixed)
        #expect(Self.blockKinds(parts).first == 0 && Self.blockKinds(parts).last == 2)
        #expect(try Self.inflate(&inflater, parts, keepsWindow: false) == mixed)
        var context = Deflater.Context(windowBits: 15)
        var server = Inflater()
        for message in [mixed, Self.jsonLines, random] {
            let compressed = Deflater.compress(message, context: &context)
            #expect(try Self.inflate(&server, compressed) == message)
        }
    }

    @Test("Huffman code lengths: complete codes, none longer than the limit, even for counts that would go deeper")
    func huffmanLengths() {
        /// Each length's share of the code space, in 2^-15ths: exactly 2^15 for a complete code.
        func space(_ lengths: [UInt8]) -> Int { lengths.reduce(0) { $0 + ($1 == 0 ? 0 : 1 << (15 - Int($1))) } }
        // Counts like the Fibonacci numbers make an optimal code as deep as there are symbols.
        var fibonacci: [UInt32] = [1, 1]
        while fibonacci.count < 30 { fibonacci.append(fibonacci[fibonacci.count - 1] + fibonacci[fibonacci.count - 2]) }
        for (counts, limit) in [(fibonacci, 15), (Array(fibonacci.prefix(19)), 7), (fibonacci + [UInt32](repeating: 0, count: 256), 15)] {
            let lengths = HuffmanLengths.lengths(counts, limit: limit)
            #expect(lengths.max() ?? 0 <= UInt8(limit))
            #expect(space(lengths) == 1 << 15)
            #expect(zip(counts, lengths).allSatisfy { ($0 == 0) == ($1 == 0) })
        }
        // Under the limit, the optimal code: the Fibonacci counts' first 10 go 1, 2, … 9, 9 deep.
        #expect(HuffmanLengths.lengths(Array(fibonacci.prefix(10)), limit: 15) == [9, 9, 8, 7, 6, 5, 4, 3, 2, 1])
        // One symbol, or none: two codes of one bit, never a lone code (zlib refuses an
        // incomplete code-length code).
        #expect(HuffmanLengths.lengths([0, 0, 7, 0], limit: 7) == [1, 0, 1, 0])
        #expect(HuffmanLengths.lengths([0, 0, 0], limit: 7) == [1, 1, 0])
        // Equal counts over every literal/length symbol: 8 and 9 bits.
        let flat = HuffmanLengths.lengths([UInt32](repeating: 5, count: 286), limit: 15)
        #expect(Set(flat) == [8, 9] && space(flat) == 1 << 15)
        // Canonical codes (RFC 1951 §3.2.2's example: lengths 3, 3, 3, 3, 3, 2, 4, 4), bit-reversed.
        let example = HuffmanLengths.codes([3, 3, 3, 3, 3, 2, 4, 4])
        #expect(example == [0b010, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111].enumerated().map {
            DeflateTables.reversed($0.element, [3, 3, 3, 3, 3, 2, 4, 4][$0.offset])
        })
    }

    @Test("with the context taken over, a message refers back to those before it and inflates in the server's running window", arguments: [9, 12, 15])
    func contextTakenOver(windowBits: Int) throws {
        var generator = SystemRandomNumberGenerator()
        // A feed of similar JSON messages, some random bytes between them, and one longer than
        // the window (its own tail is then the whole history).
        let feed: [[UInt8]] = (0..<40).map { index in
            switch index % 10 {
            case 7: (0..<3_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 9: Array(Self.jsonLines.prefix(2_000)) + Array(repeating: UInt8(index), count: 40_000)
            default: Array(#"{"id":\#(index),"symbol":"COUR","price":\#(100 + index).25,"venue":"loopback","side":"buy"}"#.utf8)
            }
        }
        var context = Deflater.Context(windowBits: windowBits)
        var inflater = Inflater()  // the server's: one window across the messages
        var alone = 0
        var together = 0
        for (index, message) in feed.enumerated() {
            let compressed = Deflater.compress(message, context: &context)
            #expect(try Self.inflate(&inflater, compressed) == message)
            #expect(Self.farthestReference(compressed) <= 1 << windowBits)
            // What the context keeps: one to two windows, the newest bytes last.
            #expect(context.data.count < 2 << windowBits && context.data.suffix(message.count).elementsEqual(message.suffix(context.data.count)))
            if index % 10 < 7 {
                together += compressed.count
                alone += Deflater.compress(message, windowBits: windowBits).count
            }
        }
        // The small messages are near copies of the ones before: far shorter with their context.
        #expect(together * 2 < alone, "\(together) bytes with the context, \(alone) without")
        var pair = Deflater.Context(windowBits: windowBits)
        _ = Deflater.compress(feed[0], context: &pair)
        #expect(Deflater.compress(feed[1], context: &pair).count * 2 < Deflater.compress(feed[1], windowBits: windowBits).count)
        // Reset, nothing before is referred to: the message alone, byte for byte.
        pair.reset()
        #expect(Deflater.compress(feed[1], context: &pair) == Deflater.compress(feed[1], windowBits: windowBits))
    }

    @Test("a message longer than the chains' 16-bit positions reach keeps finding matches a window back, alone and with its context", arguments: [9, 15])
    func pastTheTablesReach(windowBits: Int) throws {
        var generator = SystemRandomNumberGenerator()
        // A random block repeated: after the first copy, every byte has a match one block back,
        // on both sides of each point where the chains' origin moves (every ~32 K positions).
        let block = (0..<min(20_000, (1 << windowBits) - 300)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let long = Array([[UInt8]](repeating: block, count: 200_000 / block.count + 1).joined())
        let alone = Deflater.compress(long, windowBits: windowBits)
        var fresh = Inflater()
        #expect(try Self.inflate(&fresh, alone, keepsWindow: false) == long)
        #expect(alone.count < block.count * 11 / 10 + 2_000, "\(alone.count) bytes for \(block.count) random ones repeated")
        #expect(Self.farthestReference(alone) <= 1 << windowBits)
        // With a context: a short message, the long one, then one that repeats the block again.
        var context = Deflater.Context(windowBits: windowBits)
        var server = Inflater()
        for message in [Array(Self.jsonLines.prefix(500)), long, block] {
            let compressed = Deflater.compress(message, context: &context)
            #expect(try Self.inflate(&server, compressed) == message)
            #expect(Self.farthestReference(compressed) <= 1 << windowBits)
            if message == block { #expect(compressed.count < block.count / 10, "the block again: \(compressed.count) bytes") }
        }
        #expect(context.data.count < 2 << windowBits)
    }

    /// The longest distance in what the deflater wrote, read block by block (stored, fixed and
    /// dynamic codes) up to the sync flush's empty stored block; `Int.max` for anything else
    /// (a block marked last, a code that is not one, bytes past the flush).
    static func farthestReference(_ bytes: [UInt8]) -> Int {
        var reader = DeflateReader(bytes)
        return (try? reader.farthestReference()) ?? Int.max
    }

    /// Which kinds of block (0 stored, 1 fixed, 2 dynamic) the deflater wrote, in order, the sync
    /// flush's empty stored block left out.
    static func blockKinds(_ bytes: [UInt8]) -> [Int] {
        var reader = DeflateReader(bytes)
        _ = try? reader.farthestReference()
        return reader.kinds.dropLast().map { $0 }
    }

    @Test("corrupt input is a typed failure, never a crash", arguments: [
        ("07", "a block of type 3"),
        ("000500fbff48656c6c6f", "a stored length that does not match its complement"),
        ("0300", "a fixed block of nothing but its end, marked final and then more"),
        ("f200110000", "a distance before the window's start"),
        ("f248cdc9c9", "input that ends inside a block"),
        ("05e0", "a dynamic block whose code-length code is over-subscribed"),
    ])
    func corrupt(hex: String, what: String) {
        var inflater = Inflater()
        let outcome = Result { () throws(Inflater.Failure) in try inflater.inflate(Self.bytes(hex), limit: 1 << 20, keepsWindow: true) }
        if hex == "0300" {
            // A final, empty fixed block: nothing, and what follows is ignored.
            #expect((try? outcome.get()) == [])
        } else {
            #expect(throws: Inflater.Failure.self, "\(what)") { try outcome.get() }
        }
    }

    @Test("a bomb stops at the limit: 10 MiB of zeros from a few KiB fail at 1 MiB, nothing past it written")
    func bomb() throws {
        let zeros = Deflater.compress([UInt8](repeating: 0, count: 10 << 20))
        #expect(zeros.count < 100_000)
        var inflater = Inflater()
        #expect(throws: Inflater.Failure.tooLarge) { try Self.inflate(&inflater, zeros, limit: 1 << 20) }
        #expect(try Self.inflate(&inflater, zeros, limit: 10 << 20).count == 10 << 20)
    }

    @Test("the negotiation: what the server may answer to the offer, and what fails the handshake")
    func negotiation() throws {
        let offered = WebSocketCompression.permessageDeflate
        #expect(PerMessageDeflate.offer(offered) == "permessage-deflate; client_no_context_takeover; client_max_window_bits")
        #expect(PerMessageDeflate.offer(WebSocketCompression(serverNoContextTakeover: true)).hasSuffix("; server_no_context_takeover"))
        let takingOver = WebSocketCompression(clientNoContextTakeover: false)
        #expect(PerMessageDeflate.offer(takingOver) == "permessage-deflate; client_max_window_bits")
        #expect(try PerMessageDeflate.accept(nil, offered: offered) == nil)
        let plain = try #require(try PerMessageDeflate.accept("permessage-deflate", offered: offered))
        #expect(plain == NegotiatedCompression(serverNoContextTakeover: false, serverMaxWindowBits: 15, clientMaxWindowBits: 15))
        #expect(plain.description == "permessage-deflate; client_no_context_takeover")
        let over = try #require(try PerMessageDeflate.accept("permessage-deflate", offered: takingOver))
        #expect(!over.clientNoContextTakeover)
        #expect(over.description == "permessage-deflate", "this end takes the context over")
        // A server may ask this end to compress each message alone, offered or not.
        #expect(try PerMessageDeflate.accept("permessage-deflate; client_no_context_takeover", offered: takingOver)?.clientNoContextTakeover == true)
        let full = try #require(
            try PerMessageDeflate.accept(
                #"Permessage-Deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits="9""#,
                offered: offered))
        #expect(full == NegotiatedCompression(serverNoContextTakeover: true, serverMaxWindowBits: 10, clientMaxWindowBits: 9))
        #expect(full.description.contains("server_max_window_bits=10"))
        for answer in [
            "x-webkit-deflate-frame", "permessage-deflate, permessage-deflate", "permessage-deflate; server_max_window_bits",
            "permessage-deflate; server_max_window_bits=7", "permessage-deflate; client_max_window_bits=16",
            "permessage-deflate; client_max_window_bits=010", "permessage-deflate; server_no_context_takeover=1",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover", "permessage-deflate; level=9",
            "permessage-deflate; client_max_window_bits",
        ] {
            #expect(throws: WebSocketFailure.self, "\(answer)") { try PerMessageDeflate.accept(answer, offered: offered) }
        }
        // Nothing offered: any extension fails the handshake.
        #expect(throws: WebSocketFailure.self) { try PerMessageDeflate.accept("permessage-deflate", offered: nil) }
    }

    static let chat = Request.get |> url("wss://chat.test/live")

    static func server(compression: Bool = true, _ script: @escaping @Sendable (WebSocketPeer) async throws -> Void) -> InMemoryExecutor {
        InMemoryExecutor(routes: [.init(.get, "/live", .webSocket(compression: compression, script))])
    }

    @Test("compressed both ways in memory: large messages go compressed, small and incompressible ones as they are")
    func socket() async throws {
        let frames = Locked<[WebSocketPeer.Frame]>([])
        let executor = Self.server { peer in
            for _ in 0..<3 {
                guard let frame = try await peer.receiveFrame() else { return }
                frames.withLock { $0.append(frame) }
            }
            try await peer.send(.text(String(repeating: "tick ", count: 1_000)), compressed: true)
            try await peer.send(.binary(Data([1, 2, 3])), compressed: true)
            try await peer.close()
            _ = try await peer.receiveFrame()
        }
        var options = WebSocketOptions()
        options.compression = .permessageDeflate
        let socket = try await executor.webSocket(Self.chat, options: options)
        #expect(socket.compression?.serverNoContextTakeover == false)
        #expect(executor.requests.first?.headers["Sec-WebSocket-Extensions"]?.hasPrefix("permessage-deflate") == true)
        let large = String(repeating: "a compressible line\n", count: 200)
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try await socket.send(.text(large))
        try await socket.send(.text("small"))
        try await socket.send(.binary(noise))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text(String(repeating: "tick ", count: 1_000)))
        #expect(try await messages.next() == .binary(Data([1, 2, 3])))
        #expect(try await messages.next() == nil)
        let seen = frames.withLock { $0 }
        #expect(seen.map(\.isCompressed) == [true, false, false])
        var inflater = Inflater()
        #expect(try Self.inflate(&inflater, [UInt8](seen[0].payload)) == Array(large.utf8))
        #expect(seen[0].payload.count < large.utf8.count / 10)
    }

    @Test("the context taken over in memory: 100 similar messages from four tasks at once, each compressed in its turn, all inflated in the peer's one window")
    func contextTakenOverInMemory() async throws {
        let received = Locked<[String]>([])
        let binaries = Locked<[Data]>([])
        let executor = Self.server { peer in
            for _ in 0..<100 {
                guard case .text(let text) = try await peer.receiveMessage() else { return }
                received.withLock { $0.append(text) }
            }
            for _ in 0..<2 {
                guard case .binary(let data) = try await peer.receiveMessage() else { return }
                binaries.withLock { $0.append(data) }
            }
            try await peer.close()
            _ = try await peer.receiveFrame()
        }
        var options = WebSocketOptions()
        options.compression = WebSocketCompression(minimumSize: 0, clientNoContextTakeover: false)
        let socket = try await executor.webSocket(Self.chat, options: options)
        #expect(socket.compression?.clientNoContextTakeover == false)
        let sent = (0..<4).map { task in
            (0..<25).map { #"{"task":\#(task),"sequence":\#($0),"symbol":"COUR","venue":"loopback","side":"buy","quantity":100}"# }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for messages in sent {
                group.addTask { for message in messages { try await socket.send(.text(message)) } }
            }
            try await group.waitForAll()
        }
        // Noise goes as it is (compressing makes it longer), so the server never sees it: the
        // noise twice over, which compresses well against the noise, must be compressed alone.
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try await socket.send(.binary(noise))
        try await socket.send(.binary(noise + noise))
        for try await _ in socket.messages {}
        let arrived = received.withLock { $0 }
        #expect(arrived.sorted() == sent.flatMap { $0 }.sorted())
        // Each task's messages arrive in the order it sent them.
        for messages in sent { #expect(arrived.filter { messages.contains($0) } == messages) }
        #expect(binaries.withLock { $0 } == [noise, noise + noise])
    }

    @Test("a server that declines, or no offer: nothing is compressed, RSV1 stays a protocol error")
    func declined() async throws {
        let frames = Locked<[WebSocketPeer.Frame]>([])
        let executor = Self.server(compression: false) { peer in
            if let frame = try await peer.receiveFrame() { frames.withLock { $0.append(frame) } }
            try await peer.send(frame: 0x1, payload: Data("x".utf8), reservedBits: 0b100)
            _ = try await peer.receiveFrame()
        }
        var options = WebSocketOptions()
        options.compression = .permessageDeflate
        let socket = try await executor.webSocket(Self.chat, options: options)
        #expect(socket.compression == nil)
        try await socket.send(.text(String(repeating: "x", count: 5_000)))
        let error = await #expect(throws: CourierError.self) { for try await _ in socket.messages {} }
        #expect(error.flatMap(WebSocketTests.failure)?.closeCode == .protocolError)
        #expect(frames.withLock { $0.map(\.isCompressed) } == [false])
    }

    @Test("a compressed message that inflates past the limit, does not inflate, or is not UTF-8: the right code", arguments: [
        ("bomb", WebSocketFailure.Kind.messageTooLarge, WebSocketCloseCode.messageTooBig),
        ("corrupt", .protocolError, .invalidPayload),
        ("not UTF-8", .invalidUTF8, .invalidPayload),
    ])
    func hostile(name: String, kind: WebSocketFailure.Kind, code: WebSocketCloseCode) async throws {
        let reply = Locked<WebSocketPeer.Frame?>(nil)
        let executor = Self.server { peer in
            switch name {
            case "bomb":
                // 8 MiB of zeros in some 50 KiB, in frames of 4 KiB: the first is RSV1.
                let payload = Data(Deflater.compress([UInt8](repeating: 0, count: 8 << 20)))
                var offset = 0
                while offset < payload.count {
                    let end = min(payload.count, offset + 4_096)
                    try await peer.send(
                        frame: offset == 0 ? 0x2 : 0x0, payload: payload[offset..<end], isFinal: end == payload.count,
                        reservedBits: offset == 0 ? 0b100 : 0)
                    offset = end
                }
            case "corrupt": try await peer.send(frame: 0x2, payload: Data([0x07]), reservedBits: 0b100)
            default: try await peer.send(frame: 0x1, payload: Data(Deflater.compress([0x41, 0xC0, 0xAF, 0x41])), reservedBits: 0b100)
            }
            let frame = try await peer.receiveFrame()
            reply.withLock { $0 = frame }
        }
        var options = WebSocketOptions()
        options.compression = .permessageDeflate
        options.maximumMessageSize = 1 << 20
        let socket = try await executor.webSocket(Self.chat, options: options)
        let error = await #expect(throws: CourierError.self) { for try await _ in socket.messages {} }
        let failure = try #require(error.flatMap(WebSocketTests.failure))
        #expect(failure.kind == kind)
        #expect(failure.closeCode == code)
        let sent = try await waitFor { reply.withLock { $0 } }
        #expect(sent.closeCode == code)
    }

    @Test("options: a negative minimum size counts as zero; compression is off unless asked for")
    func options() {
        #expect(WebSocketCompression(minimumSize: -1).minimumSize == 0)
        #expect(WebSocketOptions().compression == nil)
    }
}

/// A DEFLATE reader of its own for the tests (RFC 1951, written apart from the inflater it
/// checks): walks every block, notes each one's kind and the longest distance any match uses.
struct DeflateReader {
    struct Malformed: Error {}
    let bytes: [UInt8]
    var position = 0
    var kinds: [Int] = []

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func bit() throws -> Int {
        guard position / 8 < bytes.count else { throw Malformed() }
        defer { position += 1 }
        return Int(bytes[position / 8] >> UInt8(position % 8)) & 1
    }

    mutating func bits(_ count: Int) throws -> Int {
        var value = 0
        for shift in 0..<count { value |= try bit() << shift }
        return value
    }

    /// A canonical code as a map from (length, code) to symbol.
    static func code(_ lengths: [Int]) -> [Int: Int] {
        var map: [Int: Int] = [:]
        var code = 0
        for length in 1...15 {
            for (symbol, each) in lengths.enumerated() where each == length {
                map[length << 16 | code] = symbol
                code += 1
            }
            code <<= 1
        }
        return map
    }

    mutating func symbol(_ code: [Int: Int]) throws -> Int {
        var value = 0
        for length in 1...15 {
            value = value << 1 | (try bit())
            if let symbol = code[length << 16 | value] { return symbol }
        }
        throw Malformed()
    }

    mutating func farthestReference() throws -> Int {
        let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
        let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
        let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var farthest = 0
        while true {
            guard try bit() == 0 else { throw Malformed() }  // never the last block
            let kind = try bits(2)
            kinds.append(kind)
            let literal: [Int: Int]
            let distance: [Int: Int]
            switch kind {
            case 0:
                position = (position + 7) / 8 * 8
                if position / 8 == bytes.count { return farthest }  // the flush, its length left off
                let length = try bits(16)
                guard try bits(16) == length ^ 0xFFFF else { throw Malformed() }
                guard length > 0 else { throw Malformed() }
                position += length * 8
                guard position / 8 <= bytes.count else { throw Malformed() }
                continue
            case 1:
                literal = Self.code((0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 })
                distance = Self.code([Int](repeating: 5, count: 30))
            case 2:
                let literalCount = try bits(5) + 257
                let distanceCount = try bits(5) + 1
                let codeLengthCount = try bits(4) + 4
                var codeLengths = [Int](repeating: 0, count: 19)
                for index in 0..<codeLengthCount { codeLengths[order[index]] = try bits(3) }
                let codeLengthCode = Self.code(codeLengths)
                var lengths: [Int] = []
                while lengths.count < literalCount + distanceCount {
                    switch try symbol(codeLengthCode) {
                    case let value where value < 16: lengths.append(value)
                    case 16:
                        guard let last = lengths.last else { throw Malformed() }
                        lengths += [Int](repeating: last, count: 3 + (try bits(2)))
                    case 17: lengths += [Int](repeating: 0, count: 3 + (try bits(3)))
                    default: lengths += [Int](repeating: 0, count: 11 + (try bits(7)))
                    }
                }
                guard lengths.count == literalCount + distanceCount else { throw Malformed() }
                literal = Self.code(Array(lengths[..<literalCount]))
                distance = Self.code(Array(lengths[literalCount...]))
            default:
                throw Malformed()
            }
            while true {
                let next = try symbol(literal)
                if next < 256 { continue }
                if next == 256 { break }
                _ = try bits(lengthExtra[next - 257])
                let code = try symbol(distance)
                farthest = max(farthest, distanceBase[code] + (try bits(distanceExtra[code])))
            }
        }
    }
}
