import RedisCluster
import SuggestTestSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The cluster most suites share (3 masters, 3 replicas): started once per test process, in ~5 s. Its slots
/// never move, so tests may compare the client's layout with the cluster's.
func sharedCluster() throws -> LocalRedisCluster {
    try LocalRedisCluster.shared("redis-cluster-tests")
}

/// The cluster the slot-moving tests share, apart from the others so that no layout moves under them.
func migrationCluster() throws -> LocalRedisCluster {
    try LocalRedisCluster.shared("redis-migration-tests")
}

/// A client for a local cluster, with short limits so that a failing test fails quickly.
func makeClient(
    _ cluster: LocalRedisCluster, _ adjust: (inout RedisClusterConfiguration) -> Void = { _ in }
) throws -> RedisClusterClient {
    var configuration = try RedisClusterConfiguration(url: cluster.url)
    configuration.retryTimeout = .seconds(5)
    adjust(&configuration)
    return try RedisClusterClient(configuration: configuration)
}

/// Keys that differ per run of a test (a seeded prefix), so that tests sharing a cluster never touch each other's.
func uniquePrefix(_ label: String) -> String {
    var generator = SystemRandomNumberGenerator()
    return "\(label)-\(UInt32.random(in: 0...UInt32.max, using: &generator))"
}

/// Runs `body(index)` on `count` real threads at once (not the test runner's few cooperative ones) and waits for all.
/// - Returns: what each thread threw, in order (`nil` for none).
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> [String?] {
    final class Work: Sendable {
        let body: @Sendable (Int) throws -> Void
        let index: Int
        let failure = Mutex<String?>(nil)
        init(_ body: @escaping @Sendable (Int) throws -> Void, _ index: Int) {
            self.body = body
            self.index = index
        }
    }
    let works = (0..<count).map { Work(body, $0) }
    var threads: [pthread_t] = []
    for work in works {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(work).toOpaque()
        pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let work = Unmanaged<Work>.fromOpaque(raw).takeRetainedValue()
                do { try work.body(work.index) } catch { work.failure.withLock { $0 = "\(error)" } }
                return nil
            }, box)
        threads.append(thread)
    }
    for thread in threads { pthread_join(thread, nil) }
    return works.map { $0.failure.withLock { $0 } }
}

/// A Redis call on a thread of its own, joined later: what a test waits for while it does something else. Not a
/// `Task`: the tests block their threads on purpose, and a task could wait behind them for one of the runner's few
/// threads.
final class BackgroundCall: Sendable {
    private let body: @Sendable () throws -> RedisValue
    private let outcome = Mutex<Result<RedisValue, any Error>?>(nil)
    private let thread = Mutex<pthread_t?>(nil)

    init(_ body: @escaping @Sendable () throws -> RedisValue) {
        self.body = body
        let started = BackgroundCall.start(self)
        thread.withLock { $0 = started }
    }

    private static func start(_ call: BackgroundCall) -> pthread_t {
        var thread = pthread_t()
        pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<BackgroundCall>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(call).toOpaque())
        return thread
    }

    private func run() {
        let result: Result<RedisValue, any Error>
        do { result = .success(try body()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
    }

    /// Waits for the thread and returns what the call returned or threw.
    func join() -> Result<RedisValue, any Error> {
        if let thread = thread.withLock({ $0 }) {
            pthread_join(thread, nil)
            self.thread.withLock { $0 = nil }
        }
        return outcome.withLock { $0 } ?? .failure(HarnessError("the thread was already joined"))
    }
}

extension RedisValue {
    /// A bulk string from text, for comparisons.
    static func bulk(_ text: String) -> RedisValue { .bulkString(Array(text.utf8)) }
}
