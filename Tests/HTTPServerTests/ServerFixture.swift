import HTTPServer
import SuggestTestSupport
import Synchronization
import SystemThread

#if canImport(Glibc)
    import Glibc
#endif

/// The log lines a server wrote, for tests that check them.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }

    func contains(_ fragment: String) -> Bool { all.contains { $0.contains(fragment) } }
}

/// Counts handler calls, for tests that check a handler never ran.
final class CallCounter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A configuration for tests: a free port on loopback, two threads, short limits.
func testConfiguration(
    workerThreads: Int = 2, handlerThreads: Int = 0, connectionLimit: Int = 64, perIPConnectionLimit: Int? = nil,
    connectionTimeout: Duration = .seconds(10), maximumBodySize: Int = 1 << 20, bodyBytesInMemoryLimit: Int = 64 << 20,
    host: String = "127.0.0.1"
) -> HTTPServer.Configuration {
    HTTPServer.Configuration(
        host: host, port: 0, workerThreads: workerThreads, handlerThreads: handlerThreads,
        connectionLimit: connectionLimit,
        perIPConnectionLimit: perIPConnectionLimit, connectionTimeout: connectionTimeout,
        maximumBodySize: maximumBodySize, bodyBytesInMemoryLimit: bodyBytesInMemoryLimit)
}

/// Starts a real server, runs `body` with it, and stops it whether `body` returns or throws.
func withServer<Result>(
    _ configuration: HTTPServer.Configuration = testConfiguration(), log: LogLines = LogLines(),
    mayWait: @escaping @Sendable (HTTPRequest) -> Bool = { $0.method == .post },
    screen: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
    handler: @escaping HTTPServer.Handler, _ body: (HTTPServer) throws -> Result
) throws -> Result {
    let server = try HTTPServer(
        configuration: configuration, log: { log.append($0) }, mayWait: mayWait, screen: screen, handler: handler)
    defer { server.stop(gracePeriod: .seconds(2)) }
    return try body(server)
}

/// A handler that echoes what it was given, one `key: value` line each, so a test can check what the server
/// parsed: method, path, segments, query items, chosen headers, the body's length and FNV-1a hash.
let echoHandler: HTTPServer.Handler = { request in
    var lines = ["method: \(request.method)", "target: \(request.target)", "path: \(request.path)"]
    lines.append("segments: \(request.pathSegments.map { "[\($0)]" }.joined())")
    lines.append("query: \(request.query ?? "<none>")")
    for item in request.queryItems { lines.append("item: [\(item.name)]=[\(item.value)]") }
    lines.append("body: \(request.body.count) \(fnv1a(request.body))")
    lines.append("version: \(request.version)")
    lines.append("client: \(request.clientAddress.map(\.description) ?? "<none>")")
    for header in request.headers { lines.append("header: \(header.name)=\(header.value)") }
    return .text(lines.joined(separator: "\n") + "\n")
}

/// The echo handler, counting its calls in `calls`.
func counting(_ calls: CallCounter) -> HTTPServer.Handler {
    { request in
        calls.increment()
        return echoHandler(request)
    }
}

/// The lines of an echo that start with `key: `, without it.
func echoed(_ key: String, in response: WireResponse) -> [String] {
    response.text.split(separator: "\n").compactMap { line in
        line.hasPrefix(key + ": ") ? String(line.dropFirst(key.count + 2)) : nil
    }
}

/// FNV-1a, 64 bits: enough to tell bodies apart in a test.
func fnv1a(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}

/// Seeded random bytes.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededRandom(seed: seed)
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

/// Polls `condition` every 5 ms until it holds or `timeout` seconds pass.
func eventually(within timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
        if condition() { return true }
        sleepSeconds(0.005)
    }
    return condition()
}

/// Whether this machine can bind and connect over IPv6 loopback.
let ipv6LoopbackAvailable: Bool = {
    let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    inet_pton(AF_INET6, "::1", &address.sin6_addr)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    }
    return bound == 0
}()

/// A thread of its own for work that must start now, whatever the test runner's pools are busy with.
final class TestThread {
    private var thread: pthread_t

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () -> Void) throws {
        switch startSystemThread(body) {
        case .success(let thread): self.thread = thread
        case .failure(let refused):
            throw HarnessError("cannot start a thread: \(String(cString: strerror(refused.number)))")
        }
    }

    /// Waits for the thread to end.
    func join() { pthread_join(thread, nil) }
}
