import RedisCluster
import SuggestTestSupport
import Testing

@Suite("Hash slots")
struct HashSlotTests {
    @Test("CRC16/XMODEM of the spec's check string is 0x31C3")
    func checkValue() {
        // The cluster specification's reference output: CRC16("123456789") = 0x31C3 = 12739.
        #expect(RedisHashSlot.of("123456789") == 0x31C3 & 0x3FFF)
        #expect(RedisHashSlot.of(Array("123456789".utf8)) == 12739)
    }

    @Test("hash tags follow the specification's rules")
    func hashTags() {
        #expect(RedisHashSlot.of("{user1000}.following") == RedisHashSlot.of("user1000"))
        #expect(RedisHashSlot.of("{user1000}.followers") == RedisHashSlot.of("user1000"))
        // The first `{` and the first `}` after it: `{{a}}` hashes `{a`.
        #expect(RedisHashSlot.of("{{a}}") == RedisHashSlot.of("{a"))
        // Only the first tag counts.
        #expect(RedisHashSlot.of("a{b}c{d}") == RedisHashSlot.of("b"))
        #expect(RedisHashSlot.of("foo{bar}{zap}") == RedisHashSlot.of("bar"))
        // An empty tag: the whole key is hashed.
        #expect(RedisHashSlot.of("{}") == Int(crc("{}")))
        #expect(RedisHashSlot.of("foo{}{bar}") == Int(crc("foo{}{bar}")))
        #expect(RedisHashSlot.of("foo{{bar}}zap") == RedisHashSlot.of("{bar"))
        // No closing brace: the whole key.
        #expect(RedisHashSlot.of("{abc") == Int(crc("{abc")))
        #expect(RedisHashSlot.of("") == 0)
    }

    @Test("slots equal CLUSTER KEYSLOT for random binary keys and the edge cases")
    func matchesServer() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        var generator = SeededRandom(seed: 0x5107_5EED)
        var keys: [[UInt8]] = [
            "", "{}", "{}a", "{{a}}", "a{b}c{d}", "{a}{b}", "{", "}", "}{", "}{a}", "a{}b{c}", "{user1000}.following",
            "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{abc", "abc}", "\u{0}{\u{0}}", "{é}", "é",
        ].map { Array($0.utf8) }
        let alphabet: [UInt8] = Array("{}ab".utf8) + [0, 0xFF, 13, 10]
        for _ in 0..<2000 {
            let length = Int.random(in: 0...24, using: &generator)
            keys.append(
                (0..<length).map { _ in
                    Bool.random(using: &generator)
                        ? alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
                        : UInt8.random(in: 0...255, using: &generator)
                })
        }
        let replies = try client.pipeline(keys.map { RedisCommand("CLUSTER", "KEYSLOT", $0) })
        #expect(replies.count == keys.count)
        var mismatches: [String] = []
        for (key, reply) in zip(keys, replies) where reply.integer != Int64(RedisHashSlot.of(key)) {
            mismatches.append("\(key): server \(reply), client \(RedisHashSlot.of(key))")
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("a command is routed by its first key")
    func commandSlot() {
        #expect(RedisCommand("GET", key: "{tag}x").slot == RedisHashSlot.of("tag"))
        #expect(RedisCommand("PING").slot == nil)
        var mget = RedisCommand("MGET")
        mget.appendKey("{t}a")
        mget.appendKey("other")
        #expect(mget.slot == RedisHashSlot.of("t"))
    }

    /// An independent bit-at-a-time CRC16/XMODEM, to check the table-driven one.
    private func crc(_ text: String) -> UInt16 {
        var crc: UInt16 = 0
        for byte in text.utf8 {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc & 0x3FFF
    }
}
