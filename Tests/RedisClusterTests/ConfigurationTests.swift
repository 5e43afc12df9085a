import RedisCluster
import Testing

@Suite("Configuration and URLs")
struct ConfigurationTests {
    @Test("the contract's form: seeds, with or without a password")
    func seeds() throws {
        let plain = try RedisClusterConfiguration(url: "redis://127.0.0.1:7000,127.0.0.1:7001,localhost:7002")
        #expect(
            plain.seeds == [
                RedisEndpoint(host: "127.0.0.1", port: 7000), RedisEndpoint(host: "127.0.0.1", port: 7001),
                RedisEndpoint(host: "localhost", port: 7002),
            ])
        #expect(plain.password == nil && plain.username == nil)

        let secret = try RedisClusterConfiguration(url: "redis://:s3cr%40t:x@10.0.0.1:6380")
        #expect(secret.password == "s3cr@t:x")
        #expect(secret.username == nil)
        #expect(secret.seeds == [RedisEndpoint(host: "10.0.0.1", port: 6380)])

        let user = try RedisClusterConfiguration(url: "REDIS://alice:pw@[::1]:7000/0")
        #expect(user.username == "alice" && user.password == "pw")
        #expect(user.seeds == [RedisEndpoint(host: "::1", port: 7000)])
        #expect(user.seeds[0].description == "[::1]:7000")

        // A raw `@` in the password: the last `@` ends it.
        let raw = try RedisClusterConfiguration(url: "redis://:p@ss@host:1/")
        #expect(raw.password == "p@ss" && raw.seeds == [RedisEndpoint(host: "host", port: 1)])
        // A port left out is Redis's.
        #expect(try RedisClusterConfiguration(url: "redis://cache").seeds == [RedisEndpoint(host: "cache", port: 6379)])
        // The same seed twice is asked once.
        #expect(try RedisClusterConfiguration(url: "redis://a:1,a:1").seeds.count == 1)
    }

    @Test(
        "bad URLs get one line that names the problem",
        arguments: [
            ("http://127.0.0.1:7000", "not a redis:// URL"),
            ("rediss://127.0.0.1:7000", "TLS"),
            ("redis://", "names no server"),
            ("redis://127.0.0.1:7000,,127.0.0.1:7001", "empty entry"),
            ("redis://127.0.0.1:0", "not HOST:PORT"),
            ("redis://127.0.0.1:70000", "not HOST:PORT"),
            ("redis://127.0.0.1:port", "not HOST:PORT"),
            ("redis://:7000", "not HOST:PORT"),
            ("redis://::1:7000", "not HOST:PORT"),
            ("redis://127.0.0.1:7000/3", "database '3'"),
            ("redis://127.0.0.1:7000?timeout=1", "options"),
            ("redis://alice@127.0.0.1:7000", "no password"),
            ("redis://:@127.0.0.1:7000", "password in the URL is empty"),
            ("redis://:bad%zzpw@127.0.0.1:7000", "'%'"),
        ])
    func badURLs(url: String, expected: String) {
        do {
            _ = try RedisClusterConfiguration(url: url)
            Issue.record("\(url) was accepted")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
            #expect(!error.description.contains("\n"))
            guard case .invalidConfiguration = error else {
                Issue.record("\(url): \(error) is not invalidConfiguration")
                return
            }
        }
    }

    @Test("no message shows the password")
    func passwordNeverShown() throws {
        let configuration = try RedisClusterConfiguration(url: "redis://bob:hunter2@127.0.0.1:7000")
        #expect(configuration.description == "redis://bob:***@127.0.0.1:7000")
        #expect(!"\(configuration)".contains("hunter2"))
        do {
            _ = try RedisClusterConfiguration(url: "redis://bob:hunter2@127.0.0.1:7000/9")
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
        do {
            _ = try RedisClusterConfiguration(url: "ftp://bob:hunter2@127.0.0.1:7000")
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("hunter2"), "\(error)")
        }
    }

    @Test("limits that cannot work are refused")
    func validation() {
        var configuration = RedisClusterConfiguration(seeds: [RedisEndpoint(host: "127.0.0.1", port: 7000)])
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.connectionsPerNode = 0
        #expect(throws: RedisError.self) { try RedisClusterClient(configuration: configuration) }
        configuration.connectionsPerNode = 1
        configuration.commandTimeout = .zero
        #expect(throws: RedisError.self) { try configuration.validate() }
        #expect(throws: RedisError.self) { try RedisClusterConfiguration(seeds: []).validate() }
    }

    @Test("a socket the process could not make is its limit, not an unreachable server")
    func unreachableSaysWhoseFaultItIs() {
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: 7000)
        let limit = RedisError.unreachable([endpoint], reason: "Can't create socket: Too many open files")
        #expect(limit.description.hasSuffix("this process may open no more files; raise its limit (ulimit -n) or close some"))
        let refused = RedisError.unreachable([endpoint], reason: "Connection refused")
        #expect(refused.description.hasSuffix("check that the servers are running and that the addresses are right"))
    }
}
