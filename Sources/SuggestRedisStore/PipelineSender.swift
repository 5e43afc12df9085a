import Dispatch
import RedisCluster
import Synchronization

/// Sends pipelines of writes from a thread of its own, one after another in the order given, while the caller
/// builds the next ones: the client computes a chunk's changes while Redis applies the first of them.
///
/// Each pipeline ends with `WAIT` when the store waits for replicas (so that every one is durable on its own,
/// whichever pooled connection it went through).
final class PipelineSender: Sendable {
    private let client: RedisClusterClient
    private let replicas: Int
    private let queue = DispatchQueue(label: "suggest.redis.pipeline-sender")
    private let group = DispatchGroup()
    private let outcomes = Mutex<[Int: Result<(replies: [RedisValue], confirmed: Bool), RedisError>]>([:])
    private let sent = Atomic<Int>(0)

    init(client: RedisClusterClient, replicas: Int) {
        self.client = client
        self.replicas = replicas
    }

    /// Queues a pipeline; it goes out once the ones queued before it have their replies.
    /// - Returns: its number, the index of its outcome in `finish()`.
    @discardableResult
    func send(_ commands: [RedisCommand]) -> Int {
        let ticket = sent.add(1, ordering: .relaxed).oldValue
        queue.async(group: group) { [self] in
            let outcome: Result<(replies: [RedisValue], confirmed: Bool), RedisError>
            do throws(RedisError) {
                if replicas > 0 {
                    let replicated = try client.pipeline(
                        commands, waitingForReplicas: replicas, timeout: RedisDonationStore.replicaTimeout)
                    outcome = .success((replicated.replies, replicated.replicas >= replicas))
                } else {
                    outcome = .success((try client.pipeline(commands), true))
                }
            } catch {
                outcome = .failure(error)
            }
            outcomes.withLock { $0[ticket] = outcome }
        }
        return ticket
    }

    /// Waits for every pipeline queued, and returns their outcomes in the order they were queued: the replies and
    /// whether the replicas confirmed them, or the error that kept a pipeline from its replies (its commands may
    /// have run).
    func finish() -> [Result<(replies: [RedisValue], confirmed: Bool), RedisError>] {
        group.wait()
        let count = sent.load(ordering: .relaxed)
        return outcomes.withLock { outcomes in
            (0..<count).map { outcomes[$0] ?? .failure(.unreachable([], reason: "a pipeline was not sent")) }
        }
    }
}
