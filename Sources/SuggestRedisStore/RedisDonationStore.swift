import RedisCluster
import SuggestCore

/// The store on a Redis Cluster (or one Redis server): the same donation log and ranking state as the embedded
/// store, partitioned by account, for a service that outgrows one machine.
///
/// Every key of an account shares one hash tag (`RedisKeys`), so an account lives in one slot and one script changes
/// it atomically: a donation's list entry, its conversation's record, every sorted set and index, and its identifier,
/// after checking that nobody changed the conversation meanwhile. The arithmetic is the engine's own, done here in
/// Swift (`ConversationRecord.apply`), and the ranking is `RankingEngine` over `RedisRankingSource`, so the
/// suggestions are the embedded store's to the bit, and so is `export`.
///
/// **Durability.** A donation is acknowledged only once Redis has it safely: the store refuses a server without
/// the append-only file, and, when the masters have replicas, waits after each write for one replica to have it
/// (`WAIT`), so that a master killed and replaced by its replica loses nothing acknowledged. Without replicas it
/// needs `appendfsync always`. (docs/redis.md.)
///
/// Not `Sendable` (like every store): one per thread. The cluster client behind it is shared and thread-safe.
public final class RedisDonationStore: DonationStore {
    /// Learned weights, kept per account in its `lw` hash (the default), or a policy's fixed ones.
    public let ranking: StoreRanking
    /// The policy the conversations' state is built with: `ranking.base`.
    public let policy: FrecencyPolicy
    public let types: UniformTypeTree
    let client: RedisClusterClient
    /// How many replicas acknowledge every write before it is reported done (0 without replicas).
    let replicasToWait: Int
    /// How long a write waits for them.
    static let replicaTimeout = Duration.seconds(2)

    /// Connects to the cluster at `url` (`redis://[:PASSWORD@]HOST:PORT[,HOST:PORT...]`) and checks that it can keep
    /// the store's promises.
    /// - Parameter ranking: learned weights (the default) or a policy's fixed ones; a store is meant to be used with
    ///   one ranking at a time (a client with another one rebuilds its state at its next `maintain`).
    /// - Throws: `StoreError` (`.unavailable` for an unreachable cluster or refused credentials, `.misconfigured`
    ///   for a server that would lose acknowledged donations, `.failed` for a URL that does not parse).
    public static func open(url: String, ranking: StoreRanking = .default, types: UniformTypeTree = .standard)
        throws(StoreError) -> RedisDonationStore
    {
        let client: RedisClusterClient
        do {
            client = try RedisClusterClient(url: url)
        } catch {
            throw StoreError(.failed, "cannot use \(RedisDonationStore.redacted(url)): \(error)")
        }
        return try open(client: client, ranking: ranking, types: types)
    }

    /// A store on a client already made (shared by the stores of a server's threads).
    /// - Parameter ranking: learned weights (the default) or a policy's fixed ones.
    public static func open(
        client: RedisClusterClient, ranking: StoreRanking = .default, types: UniformTypeTree = .standard
    ) throws(StoreError) -> RedisDonationStore {
        let replicas = try durabilityCheck(client)
        let store = RedisDonationStore(ranking: ranking, types: types, client: client, replicasToWait: replicas)
        // A new store holds no state yet: it is built under this policy from its first donation, and so are its
        // learned weights.
        if try store.setting("ranking.policy") == nil,
            try store.send(RedisCommand("EXISTS", key: RedisKeys.accounts)).integer == 0
        {
            try store.setSetting("ranking.policy", store.policyFingerprint)
            if let weights = ranking.learnedPolicy?.weightsFingerprint { try store.setSetting(Self.weightsSetting, weights) }
        }
        return store
    }

    init(ranking: StoreRanking, types: UniformTypeTree, client: RedisClusterClient, replicasToWait: Int) {
        self.ranking = ranking
        policy = ranking.base
        self.types = types
        self.client = client
        self.replicasToWait = replicasToWait
    }

    /// Checks every master's persistence, and says how many replicas each write must wait for.
    ///
    /// - Throws: `.misconfigured` for a master without the append-only file, or with neither `appendfsync always`
    ///   nor a replica to wait for.
    static func durabilityCheck(_ client: RedisClusterClient) throws(StoreError) -> Int {
        let configurations: [RedisNodeReply]
        let replications: [RedisNodeReply]
        do {
            configurations = try client.sendToEveryMaster(RedisCommand("CONFIG", "GET", "append*"))
            replications = try client.sendToEveryMaster(RedisCommand("INFO", "replication"))
        } catch {
            throw translate(error)
        }
        var everyMasterHasAReplica = true
        for (configuration, replication) in zip(configurations, replications) {
            let endpoint = configuration.node.endpoint
            let pairs: [RedisValue]
            let info: String
            do {
                pairs = try configuration.result.get().array ?? []
                info = try replication.result.get().string ?? ""
            } catch {
                throw translate(error)
            }
            var settings: [String: String] = [:]
            for index in stride(from: 0, to: pairs.count - 1, by: 2) {
                if let name = pairs[index].string, let setting = pairs[index + 1].string { settings[name] = setting }
            }
            guard settings["appendonly"] == "yes" else {
                throw StoreError(
                    .misconfigured,
                    "Redis at \(endpoint) keeps no append-only file (appendonly \(settings["appendonly"] ?? "?")), so a "
                        + "restart would lose acknowledged donations; set appendonly yes (docs/redis.md)")
            }
            // `INFO replication` counts the replicas connected now, including those CLUSTER SLOTS leaves out.
            let replicas = info.split(whereSeparator: { $0 == "\r" || $0 == "\n" })
                .first { $0.hasPrefix("connected_slaves:") }
                .flatMap { Int($0.dropFirst("connected_slaves:".count)) } ?? 0
            if replicas == 0 {
                everyMasterHasAReplica = false
                guard settings["appendfsync"] == "always" else {
                    throw StoreError(
                        .misconfigured,
                        "Redis at \(endpoint) has no replica and fsyncs its log \(settings["appendfsync"] ?? "?"), so a "
                            + "crash could lose the last second of acknowledged donations; set appendfsync always, or "
                            + "give every master a replica (docs/redis.md)")
                }
            }
        }
        return everyMasterHasAReplica ? 1 : 0
    }

    // MARK: Commands

    /// Sends one command, translating Redis's failures into the store's.
    func send(_ command: RedisCommand) throws(StoreError) -> RedisValue {
        do {
            return try client.send(command)
        } catch {
            throw Self.translate(error)
        }
    }

    /// Sends commands in one round trip per node.
    func pipeline(_ commands: [RedisCommand]) throws(StoreError) -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        do {
            return try client.pipeline(commands)
        } catch {
            throw Self.translate(error)
        }
    }

    /// Sends writes, and returns once they are durable: with replicas, once one replica of each node written to has
    /// them (`WAIT`).
    /// - Throws: `.unavailable` when no replica confirmed within `replicaTimeout` (the writes are on the master,
    ///   but not acknowledged: repeat them, with identifiers they are recorded once).
    func write(_ commands: [RedisCommand]) throws(StoreError) -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        guard replicasToWait > 0 else { return try pipeline(commands) }
        let outcome: RedisClusterClient.ReplicatedReplies
        do {
            outcome = try client.pipeline(commands, waitingForReplicas: replicasToWait, timeout: Self.replicaTimeout)
        } catch {
            throw Self.translate(error)
        }
        guard outcome.replicas >= replicasToWait else {
            throw StoreError(
                .unavailable,
                "no replica of the Redis master confirmed the write within \(Self.replicaTimeout); it may be lost in a "
                    + "failover, so it is not acknowledged")
        }
        return outcome.replies
    }

    /// The store's error for a Redis failure.
    static func translate(_ error: RedisError) -> StoreError {
        switch error {
        case .unreachable, .authenticationFailed, .clusterDown, .timeout, .connectionLost, .tooManyRedirects:
            return StoreError(.unavailable, error.description)
        case .outOfMemory:
            return StoreError(.diskFull, error.description)
        case .notACluster, .invalidConfiguration:
            return StoreError(.misconfigured, error.description)
        case .server, .protocolError:
            return StoreError(.failed, error.description)
        }
    }

    /// Runs `body`, translating Redis failures that escape it.
    func translating<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as RedisError {
            throw Self.translate(error)
        }
    }

    /// A URL with its password hidden, for messages.
    public static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@"), let scheme = url.firstRange(of: "://") else { return url }
        return String(url[..<scheme.upperBound]) + "***" + String(url[at...])
    }

    // MARK: Settings

    func setting(_ name: String) throws(StoreError) -> String? {
        try send(RedisCommand("HGET", key: RedisKeys.settings, name)).string
    }

    func setSetting(_ name: String, _ value: String) throws(StoreError) {
        _ = try write([RedisCommand("HSET", key: RedisKeys.settings, name, value)])
    }

    /// The fingerprint of the policy whose channels the stored state holds (the embedded store's, in the same form).
    var policyFingerprint: String { policy.stateFingerprint }

    public func checkpoint() throws {
        // Every write was durable when it returned (an fsynced log, or a replica's copy).
    }
}

@available(*, unavailable)
extension RedisDonationStore: Sendable {}
