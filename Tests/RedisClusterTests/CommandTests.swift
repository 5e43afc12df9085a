import RedisCluster
import SuggestTestSupport
import Testing

@Suite("Commands, arguments and scripts")
struct CommandTests {
    @Test("arguments are written as Redis reads them")
    func encoding() {
        let command = RedisCommand(
            "ZADD", key: "scores", 1.5, "member", Int64.min, 0, -42, Double.infinity, [UInt8]([0, 13, 10, 255]))
        #expect(
            command.arguments == [
                Array("ZADD".utf8), Array("scores".utf8), Array("1.5".utf8), Array("member".utf8),
                Array("-9223372036854775808".utf8), Array("0".utf8), Array("-42".utf8), Array("inf".utf8),
                [0, 13, 10, 255],
            ])
        #expect(command.argumentCount == 9)
        #expect(command.name == "ZADD")
        #expect(RedisCommand("SET", key: "k", "").arguments.last == [])
        #expect(UInt64.max.description == String(decoding: RedisCommand("X", UInt64.max).arguments[1], as: UTF8.self))
    }

    @Test("reads are idempotent by name, writes are not unless declared")
    func idempotence() {
        #expect(RedisCommand("GET", key: "k").isIdempotent)
        #expect(RedisCommand("zrevrange", key: "k", 0, -1).isIdempotent)
        #expect(!RedisCommand("INCR", key: "k").isIdempotent)
        #expect(!RedisCommand("SET", key: "k", "v").isIdempotent)
        var declared = RedisCommand("SET", key: "k", "v")
        declared.isIdempotent = true
        #expect(declared.isIdempotent)
        #expect(!RedisCommand(script: RedisScript("return 1"), keys: ["k"]).isIdempotent)
    }

    @Test("a script's digest is the one SCRIPT LOAD returns")
    func scriptDigest() throws {
        // FIPS 180 test vectors.
        #expect(RedisScript("abc").sha1 == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(RedisScript("").sha1 == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(
            RedisScript("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").sha1
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let master = try #require(try client.nodes().first)
        var generator = SeededRandom(seed: 0x5C819)
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 5000] {
            let body = String(
                (0..<length).map { _ in Character(Unicode.Scalar(UInt8.random(in: 97...122, using: &generator))) })
            let script = RedisScript("return '\(body)'")
            let loaded = try client.send(RedisCommand("SCRIPT", "LOAD", script.source), to: master.endpoint)
            #expect(loaded.string == script.sha1, "length \(length)")
        }
    }
}
