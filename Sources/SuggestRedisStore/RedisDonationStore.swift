import CSystem
import Dispatch
import RedisCluster
import SuggestCore
import Synchronization

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
    /// How many replicas acknowledge every write before it is reported done (0 when some master has none, and
    /// every master then fsyncs each write itself). Checked again after `durabilityRecheck` and whenever a `WAIT`
    /// comes back short: a failover leaves the promoted master without a replica, and a replica may join later.
    var replicasToWait: Int
    /// Why the cluster cannot keep the promise of durability, when a store opened for reading found it so (its
    /// writes are refused): for the command to say, as it reads all the same.
    public internal(set) var durabilityProblem: StoreError?
    /// When `replicasToWait` was last read from the masters.
    var durabilityCheckedAt: ContinuousClock.Instant
    /// How long a durability check holds before the next write checks again.
    static let durabilityRecheck = Duration.seconds(10)
    /// How long a write waits for them.
    static let replicaTimeout = Duration.seconds(2)
    /// Set while a failed write is undone: the undo's writes go out without the durability check or `WAIT`, since
    /// taking back what was not acknowledged must not wait for what made it fail (a replica lost or stalled, a
    /// master left without one): the writes to undo reached the master in the same way.
    var undoing = false
    /// The settings last read, and when (`setting(_:)`).
    var settingsCache: (values: [String: String], readAt: ContinuousClock.Instant)?
    /// Accounts this store has added to `sg:accounts` (acknowledged), so that later writes to them skip the `SADD`
    /// and its `WAIT` on another master. An account whose sequence counter is new is added again whatever this set
    /// says: another process deleted it meanwhile (`delete --all` removes every key of the account).
    var registeredAccounts: Set<[UInt8]> = []
    /// Accounts' ranking state in memory, shared by the stores of a server's threads (`RedisRankingMirror`).
    public let mirror: RedisRankingMirror?
    /// How often this store's writes lost to other writers, and waited for their leases (`WriteLease`); shared by
    /// the stores of a server's threads.
    public let contention: WriteContentionStatistics
    /// The mirror this store's last query found, used again without the mirror's lock while the mirror's
    /// generation is unchanged, for at most `RecentMirror.reuses` queries (then the catalog is asked, which also
    /// marks the account as recently used, for the budget's evictions).
    var recentMirror: RecentMirror?

    struct RecentMirror {
        static let reuses = 64
        let account: String
        let mirror: MirroredRedisAccount
        let generation: UInt64
        var uses = 0
    }

    /// Connects to the cluster at `url` (`redis://[:PASSWORD@]HOST:PORT[,HOST:PORT...]`) and checks that it can keep
    /// the store's promises.
    /// - Parameter ranking: learned weights (the default) or a policy's fixed ones; a store is meant to be used with
    ///   one ranking at a time (a client with another one rebuilds its state at its next `maintain`).
    /// - Throws: `StoreError` (`.unavailable` for an unreachable cluster or refused credentials, `.misconfigured`
    ///   for a server that would lose acknowledged donations, `.failed` for a URL that does not parse).
    public static func open(
        url: String, ranking: StoreRanking = .default, types: UniformTypeTree = .standard, reading: Bool = false
    ) throws(StoreError) -> RedisDonationStore {
        let client: RedisClusterClient
        do {
            client = try RedisClusterClient(url: url)
        } catch {
            throw StoreError(.failed, "cannot use \(RedisDonationStore.redacted(url)): \(error)")
        }
        return try open(client: client, ranking: ranking, types: types, reading: reading)
    }

    /// A store on a client already made (shared by the stores of a server's threads).
    /// - Parameters:
    ///   - ranking: learned weights (the default) or a policy's fixed ones.
    ///   - mirror: accounts' ranking state kept in memory, shared by every store of a server on this cluster, which
    ///     queries read while it is current; `checkpoint()` rebuilds what queries missed.
    ///   - reading: open for a command that only reads: a cluster that cannot keep the promise of durability
    ///     (`durabilityCheck`) is opened all the same, and its first write is refused as `misconfigured`. A
    ///     failover that left a master of an accepted configuration (`appendfsync everysec`) without a replica
    ///     refused every `list` and `export` too, though reading needs no such promise.
    ///   - contention: where the store counts its writes' losses to other writers (a server's stores share one).
    ///   - waitingForTheCluster: when no node answers yet, wait for one up to the client's retry timeout (a
    ///     server's start: a cluster that boots beside it, or restarts, under a service manager whose restarts of
    ///     a server that failed at once would soon reach their limit). Else it fails at once: a command's person
    ///     more likely mistyped the port.
    public static func open(
        client: RedisClusterClient, ranking: StoreRanking = .default, types: UniformTypeTree = .standard,
        mirror: RedisRankingMirror? = nil, contention: WriteContentionStatistics = WriteContentionStatistics(),
        reading: Bool = false, waitingForTheCluster: Bool = false
    ) throws(StoreError) -> RedisDonationStore {
        // The settings and whether any account exists are read in the check's round trip.
        let reads = [RedisCommand("HGETALL", key: RedisKeys.settings), RedisCommand("EXISTS", key: RedisKeys.accounts)]
        let (replicas, replies, problem, _) = try durabilityCheck(
            client, reading: reads, waitingForTheCluster: waitingForTheCluster)
        // A cluster that would evict keys is refused whatever the command (what it reads may be missing); one that
        // cannot promise durability only to a command that writes.
        if let problem, !reading { throw problem }
        let unchecked = problem != nil
        let store = RedisDonationStore(
            ranking: ranking, types: types, client: client, replicasToWait: replicas, mirror: mirror,
            contention: contention)
        // Its first write checks the masters again, and is refused.
        if unchecked { store.durabilityCheckedAt = .now - durabilityRecheck - .seconds(1) }
        store.durabilityProblem = problem
        // A new store holds no state yet: it is built under this policy from its first donation, and so are its
        // learned weights.
        store.cacheSettings(replies[0])
        if !unchecked, try store.setting("ranking.policy") == nil, replies[1].integer == 0 {
            try store.setSetting("ranking.policy", store.policyFingerprint)
            try store.setSetting(Self.shownLayoutSetting, "1")
            if let weights = ranking.learnedPolicy?.weightsFingerprint {
                try store.setSetting(Self.weightsSetting, weights)
            }
        }
        return store
    }

    init(
        ranking: StoreRanking, types: UniformTypeTree, client: RedisClusterClient, replicasToWait: Int,
        mirror: RedisRankingMirror? = nil, contention: WriteContentionStatistics = WriteContentionStatistics()
    ) {
        self.ranking = ranking
        policy = ranking.base
        self.types = types
        self.client = client
        self.replicasToWait = replicasToWait
        durabilityCheckedAt = .now
        self.mirror = mirror
        self.contention = contention
    }

    /// Checks every master's persistence, and says how many replicas each write must wait for: one round trip,
    /// both questions pipelined to every master at once, with `reads` (keyed reads the caller needs next) in it.
    ///
    /// - Returns: how many replicas to wait for, the replies to `reads`, as `pipeline` returns them, and why the
    ///   cluster cannot keep the promise of durability, if it cannot (`.misconfigured`: a master without the
    ///   append-only file, or with neither `appendfsync always` nor a replica to wait for).
    /// - Throws: `.misconfigured` for a master that evicts any key at its `maxmemory`.
    /// - Parameter waitingForTheCluster: as `open(client:...)` says.
    static func durabilityCheck(
        _ client: RedisClusterClient, reading reads: [RedisCommand], waitingForTheCluster: Bool = false
    ) throws(StoreError) -> (
        replicas: Int, reads: [RedisValue], problem: StoreError?, masters: Set<RedisEndpoint>
    ) {
        let (masters, readReplies) = try askEveryMaster(
            client, waitingForTheCluster: waitingForTheCluster,
            [
                RedisCommand("CONFIG", "GET", "append*"), RedisCommand("INFO", "replication"),
                RedisCommand("CONFIG", "GET", "maxmemory-policy"),
            ], with: reads)
        // Each master's fsync setting, and whether it has a replica now: writes wait for a replica only when every
        // master has one, so without that every master must fsync each write itself.
        var lazyFsync: [(endpoint: String, setting: String, hasReplica: Bool)] = []
        var withoutReplica: String?
        var withoutLog: StoreError?
        for master in masters {
            let endpoint = master.node.endpoint
            let pairs: [RedisValue]
            let info: [UInt8]
            do {
                pairs = try (master.results[0].get().array ?? []) + (master.results[2].get().array ?? [])
                info = try master.results[1].get().bytes ?? []
            } catch {
                throw translate(error)
            }
            let settings = pairs.textFields
            // suggest's keys have no time to live, so only the `allkeys-` policies evict them: a full node then
            // dropped parts of other accounts without a word (an export failed, a listing came back short, a
            // deletion left keys behind).
            if let policy = settings["maxmemory-policy"], policy.hasPrefix("allkeys-") {
                throw StoreError(
                    .misconfigured,
                    "Redis at \(endpoint) evicts any key when full (maxmemory-policy \(policy)), which would drop parts "
                        + "of accounts without a word; set maxmemory-policy noeviction (docs/redis.md)")
            }
            if settings["appendonly"] != "yes" && withoutLog == nil {
                withoutLog = StoreError(
                    .misconfigured,
                    "Redis at \(endpoint) keeps no append-only file (appendonly \(settings["appendonly"] ?? "?")), so a "
                        + "restart would lose acknowledged donations; set appendonly yes (docs/redis.md)")
            }
            // `INFO replication` counts the replicas connected now, including those CLUSTER SLOTS leaves out.
            let hasReplica = connectedReplicas(info) > 0
            if settings["appendfsync"] != "always" {
                lazyFsync.append(("\(endpoint)", settings["appendfsync"] ?? "?", hasReplica))
            }
            if !hasReplica && withoutReplica == nil { withoutReplica = "\(endpoint)" }
        }
        let asked = Set(masters.map(\.node.endpoint))
        if let withoutLog { return (1, readReplies, withoutLog, asked) }
        guard let withoutReplica else { return (1, readReplies, nil, asked) }
        // The master to name: one that has no replica itself, if a lazy one has none.
        if let lazy = lazyFsync.first(where: { !$0.hasReplica }) ?? lazyFsync.first {
            let reason =
                lazy.hasReplica
                ? "cannot be waited for on its replica, since \(withoutReplica) has none, and" : "has no replica and"
            let loss =
                lazy.setting == "everysec"
                ? "fsyncs its log once a second (appendfsync everysec), so a crash could lose the last second"
                : "leaves its log's fsync to the system (appendfsync \(lazy.setting)), so a crash could lose the last "
                    + "half minute or so"
            let problem = StoreError(
                .misconfigured,
                "Redis at \(lazy.endpoint) \(reason) \(loss) of acknowledged donations; set appendfsync always, or give "
                    + "every master a replica (docs/redis.md)")
            return (1, readReplies, problem, asked)
        }
        return (0, readReplies, nil, asked)
    }

    /// `RedisClusterClient.pipelineToEveryMaster(_:with:)`, asked again while a master cannot be reached, for up to
    /// the client's retry timeout, with the layout read anew each time: a master killed is listed until its
    /// replica is promoted, and every command that opened the store in those seconds failed at once, naming a
    /// node its user never gave, where a write waits for the promotion. When no node given answered at all (no
    /// layout was ever learned: a mistyped port, a host that does not resolve), it fails at once (it waited 10 s),
    /// unless `waitingForTheCluster`.
    static func askEveryMaster(
        _ client: RedisClusterClient, waitingForTheCluster: Bool = false, _ commands: [RedisCommand],
        with reads: [RedisCommand]
    ) throws(StoreError) -> (masters: [RedisNodeReplies], reads: [RedisValue]) {
        let deadline = ContinuousClock.now + client.configuration.retryTimeout
        while true {
            let outcome: (masters: [RedisNodeReplies], reads: [RedisValue])
            do {
                outcome = try client.pipelineToEveryMaster(commands, with: reads)
            } catch {
                guard Self.passes(error), client.hasLearnedLayout || waitingForTheCluster,
                    ContinuousClock.now < deadline
                else {
                    throw translate(error)
                }
                Self.pauseForFailover(client)
                continue
            }
            let unreachable = outcome.masters.contains { master in
                master.results.contains { result in
                    if case .failure(let error) = result { return Self.passes(error) }
                    return false
                }
            }
            guard unreachable, ContinuousClock.now < deadline else { return outcome }
            Self.pauseForFailover(client)
        }
    }

    /// Whether a failure may pass by itself within seconds: a node that cannot be reached, a connection lost, a
    /// cluster without a master for some slot (a failover under way), a node that answers nothing (paused or
    /// swapping: the cluster fails it over within its node timeout, and every command failed for 10 s when a
    /// probe stopped a master, though its replica was promoted after 3).
    private static func passes(_ error: RedisError) -> Bool {
        switch error {
        case .unreachable, .connectionLost, .clusterDown, .timeout: true
        default: false
        }
    }

    /// A quarter of a second, then the layout read again.
    private static func pauseForFailover(_ client: RedisClusterClient) {
        var pause = timespec(tv_sec: 0, tv_nsec: 250_000_000)
        _ = nanosleep(&pause, nil)
        try? client.refreshTopology()
    }

    /// The `connected_slaves:` count of an `INFO replication` reply (0 when it has none).
    ///
    /// Read as bytes, line by line: as a Swift `String`, the reply's `\r\n` is one `Character`, equal to neither
    /// `"\r"` nor `"\n"`, so a split on either would leave the reply whole.
    static func connectedReplicas(_ info: [UInt8]) -> Int {
        let field = Array("connected_slaves:".utf8)
        for line in info.split(whereSeparator: { $0 == 0x0D || $0 == 0x0A }) where line.starts(with: field) {
            return Int(String(decoding: line.dropFirst(field.count), as: UTF8.self)) ?? 0
        }
        return 0
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
    /// - Throws: as `refusingErrors` does when Redis refused one of them.
    func pipeline(_ commands: [RedisCommand]) throws(StoreError) -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        let replies: [RedisValue]
        do {
            replies = try client.pipeline(commands)
        } catch {
            throw Self.translate(error)
        }
        return try Self.refusingErrors(replies)
    }

    /// The replies of a pipeline, unless Redis refused one of its commands: then the store's error for the first
    /// refusal (`RedisValue.checked`). A refusal read as a reply would say that a change was made which was not (a
    /// setting refused by a node at its `maxmemory`), or that there was nothing to read.
    static func refusingErrors(_ replies: [RedisValue]) throws(StoreError) -> [RedisValue] {
        do {
            for reply in replies { _ = try reply.checked() }
        } catch {
            throw translate(error)
        }
        return replies
    }

    /// Sends writes, and returns once they are durable: with replicas, once one replica of each node written to has
    /// them (`WAIT`).
    /// - Throws: `.unavailable` when no replica confirmed within `replicaTimeout` (the writes are on the master,
    ///   but not acknowledged: repeat them, with identifiers they are recorded once).
    /// - Throws: also as `refusingErrors` does when Redis refused one of them.
    func write(_ commands: [RedisCommand]) throws(StoreError) -> [RedisValue] {
        if undoing { return try pipeline(commands) }
        let (replies, failure) = try writeReplicated(commands)
        // Unacknowledged first: the other commands ran, which a refusal of one would not say.
        if let failure { throw failure }
        return try Self.refusingErrors(replies)
    }

    /// Sends writes as one pipeline (one round trip per node), then, with replicas, `WAIT` on every connection used.
    /// - Returns: the replies, and why the writes, which ran, are not acknowledged: `nil` when every one is on
    ///   `replicasToWait` replicas (always, without replicas); `unreplicated`, or the check of the masters' failure
    ///   (a master left without a replica that does not fsync each write). The caller reads the replies (and notes
    ///   what ran, to undo it) before it reports the failure.
    ///
    /// A `WAIT` that comes back short is not the end: after a failover the promoted master has no replica, and the
    /// masters are checked again. When the check finds a master without a replica it has also found that every
    /// master fsyncs each write before answering (else it throws), so the writes, on a master that no failover can
    /// replace, are durable: confirmed, and later writes wait for no replica until a check finds one again.
    func writeReplicated(_ commands: [RedisCommand]) throws(StoreError) -> (replies: [RedisValue], failure: StoreError?) {
        guard !commands.isEmpty else { return ([], nil) }
        try checkDurabilityWhenDue()
        let started = ContinuousClock.now
        let outcome: WriteOutcome
        do {
            outcome = try Self.send(commands, through: client, waitingFor: replicasToWait)
        } catch {
            throw Self.translate(writing: error)
        }
        return try confirm(outcome, waitedFor: replicasToWait, waited: .now - started)
    }

    /// Sends writes as `writeReplicated` does, on another thread, so that the caller can go on while they run and
    /// a replica takes them: ``writeReplies(_:)`` waits for their replies, ``confirmWrite(_:)`` for the replicas.
    func startWrite(_ commands: [RedisCommand]) throws(StoreError) -> PendingWrite {
        try checkDurabilityWhenDue()
        return PendingWrite(commands, through: client, waitingFor: replicasToWait)
    }

    /// The replies of writes ``startWrite(_:)`` sent, as soon as they came, before any replica confirmed them.
    /// - Throws: when no reply came (the writes may have run).
    func writeReplies(_ pending: PendingWrite) throws(StoreError) -> [RedisValue] {
        do {
            return try pending.replies().get()
        } catch {
            throw Self.translate(writing: error)
        }
    }

    /// Waits until writes ``startWrite(_:)`` sent are as durable as `writeReplicated` promises.
    /// - Throws: as `writeReplicated` fails, or returns its failure: the writes ran, but are not acknowledged.
    func confirmWrite(_ pending: PendingWrite) throws(StoreError) {
        let outcome: WriteOutcome
        do {
            outcome = try pending.outcome().get()
        } catch {
            throw Self.translate(writing: error)
        }
        if let failure = try confirm(outcome, waitedFor: pending.replicas, waited: pending.took).failure {
            throw failure
        }
    }

    /// One pipeline of writes, followed by `WAIT` on every connection it used when there are replicas to wait for.
    /// - Parameter repliesRead: called with the replies before the `WAIT`s answer.
    fileprivate static func send(
        _ commands: [RedisCommand], through client: RedisClusterClient, waitingFor replicas: Int,
        repliesRead: (([RedisValue]) -> Void)? = nil
    ) throws(RedisError) -> WriteOutcome {
        guard replicas > 0 else { return WriteOutcome(replies: try client.pipeline(commands), replicas: 0) }
        let outcome = try client.pipeline(
            commands, waitingForReplicas: replicas, timeout: replicaTimeout, repliesRead: repliesRead)
        return WriteOutcome(
            replies: outcome.replies, replicas: outcome.replicas, waitsAnswered: outcome.waitsAnswered,
            writtenTo: Set(outcome.repliedBy.compactMap { $0 }))
    }

    /// Writes' replies, and the fewest replicas that confirmed them on a node (0 when none was waited for).
    struct WriteOutcome: Sendable {
        var replies: [RedisValue]
        var replicas: Int
        /// `RedisClusterClient.ReplicatedReplies.waitsAnswered`.
        var waitsAnswered = true
        /// The masters that took the writes.
        var writtenTo: Set<RedisEndpoint> = []
    }

    /// Writes that ran, as durable as `writeReplicated` promises: their replies, and why they are not acknowledged.
    /// - Parameters:
    ///   - waitedFor: the replicas the writes were sent to wait for (`replicasToWait` then: it may have changed
    ///     since, for writes confirmed later).
    ///   - waited: how long the writes and their `WAIT`s took.
    private func confirm(_ outcome: WriteOutcome, waitedFor: Int, waited: Duration)
        throws(StoreError) -> (replies: [RedisValue], failure: StoreError?)
    {
        if outcome.replicas >= waitedFor { return (outcome.replies, nil) }
        // The writes ran: a failure from here on is returned with their replies, not thrown past them.
        let masters: Set<RedisEndpoint>
        do {
            masters = try checkDurabilityAgain()
        } catch {
            return (outcome.replies, error)
        }
        // A master lost while it waited, or after, may have taken writes its replica never had: that replica,
        // promoted by the time of the check, would pass it as a master that fsyncs alone, and the writes would be
        // acknowledged lost. So they are durable without a replica only on masters the check found masters still.
        guard outcome.waitsAnswered else {
            return (outcome.replies, Self.unreplicated(after: waited, connectionLost: true))
        }
        guard replicasToWait == 0 else { return (outcome.replies, Self.unreplicated(after: waited)) }
        guard outcome.writtenTo.isSubset(of: masters) else {
            return (outcome.replies, Self.unreplicated(after: waited, connectionLost: true))
        }
        return (outcome.replies, nil)
    }

    /// Checks the masters again (`checkDurabilityAgain`) when the last check is older than `durabilityRecheck`.
    private func checkDurabilityWhenDue() throws(StoreError) {
        if ContinuousClock.now - durabilityCheckedAt > Self.durabilityRecheck { try checkDurabilityAgain() }
    }

    /// Reads again how many replicas writes must wait for (`durabilityCheck`).
    /// - Throws: `.misconfigured` when a master lost its replica and does not fsync each write.
    /// - Returns: the masters it asked.
    @discardableResult
    func checkDurabilityAgain() throws(StoreError) -> Set<RedisEndpoint> {
        let checked = try Self.durabilityCheck(client, reading: [])
        if let problem = checked.problem { throw problem }
        replicasToWait = checked.replicas
        durabilityCheckedAt = .now
        return checked.masters
    }

    /// The error for writes no replica confirmed in time.
    /// - Parameter waited: how long the writes and their `WAIT` took: a `WAIT` ends before its timeout when its
    ///   master stops being one (a `CLUSTER FAILOVER`), which the message said was a wait of the whole timeout.
    /// - Parameter connectionLost: the master stopped answering (the connection broke, it stopped waiting with an
    ///   error, or it is no longer a master).
    static func unreplicated(after waited: Duration, connectionLost: Bool = false) -> StoreError {
        let how =
            connectionLost
            ? "before the connection to its master broke, or its master stopped being one"
            : waited < replicaTimeout
                ? "before its master stopped waiting for one (a failover under way?)" : "within \(replicaTimeout)"
        return StoreError(
            .unavailable,
            "no replica of the Redis master confirmed the write \(how); it may be lost in a failover, so it is not "
                + "acknowledged")
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
        case .server(_, let message):
            return permissionDenied(message) ?? StoreError(.failed, error.description)
        case .protocolError:
            return StoreError(.failed, error.description)
        }
    }

    /// The store's error for writes that failed (`translate`), marked `mayHaveBeenRecorded` when they may have run
    /// all the same (`RedisError.mayHaveRun`), and saying so where Redis's words do not: a reply that came too late
    /// said only to check the server's load, after a deletion or a block that was made.
    static func translate(writing error: RedisError) -> StoreError {
        var store = translate(error)
        guard error.mayHaveRun else { return store }
        store.mayHaveBeenRecorded = true
        if case .timeout = error { store.message += ": " + RedisError.mayHaveRunAdvice }
        return store
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

    /// The store's settings (`sg:settings`: retention, the policy fingerprint, maintenance's bookmarks), read whole
    /// and kept for `settingsLifetime`, so that opening the store, its maintenance and a query read them once.
    ///
    /// Another process's change (`suggest config`) is seen at most that long after it; this store's own changes at
    /// once.
    func setting(_ name: String) throws(StoreError) -> String? {
        if let cached = settingsCache, ContinuousClock.now - cached.readAt < Self.settingsLifetime {
            return cached.values[name]
        }
        cacheSettings(try send(RedisCommand("HGETALL", key: RedisKeys.settings)))
        return settingsCache?.values[name]
    }

    /// How long settings read from Redis are used before they are read again.
    static let settingsLifetime = Duration.milliseconds(50)

    /// Keeps the settings an `HGETALL` of `sg:settings` returned.
    func cacheSettings(_ reply: RedisValue) {
        guard let pairs = reply.array else { return }
        settingsCache = (pairs.textFields, ContinuousClock.now)
    }

    func setSetting(_ name: String, _ value: String) throws(StoreError) {
        try setSettings([(name, value)])
    }

    /// Sets settings by `RedisScripts.setSettings`, which a full node runs too.
    func setSettings(_ settings: [(name: String, value: String)]) throws(StoreError) {
        forgetSettings()
        var command = RedisCommand(script: RedisScripts.setSettings, keys: [RedisKeys.settings])
        for (name, value) in settings {
            command.append(name)
            command.append(value)
        }
        _ = try write([command])
    }

    /// Forgets settings, after this store changed them (the next read asks Redis).
    func forgetSettings() { settingsCache = nil }

    /// The fingerprint of the policy whose channels the stored state holds (the embedded store's, in the same form).
    var policyFingerprint: String { policy.stateFingerprint }

    /// `1` once every conversation's hash keeps `dd` (`ShownDonation`): maintenance rebuilds the conversations of a
    /// store written before, once, as after a change of policy. A setting of its own, not a part of the policy's
    /// fingerprint: a version before it, writing the same cluster, would read a changed fingerprint as a change of
    /// policy, and the two would rebuild every conversation in turn, over and over; it writes hashes without `dd`,
    /// which are read as described at their latest donation.
    static let shownLayoutSetting = "layout.shown"

    /// Every write was durable when it returned (an fsynced log, or a replica's copy), so there is nothing to
    /// copy; with a mirror, one step of its upkeep runs here, off the requests' path (`RedisRankingMirror.refresh`).
    public func checkpoint() throws {
        try mirror?.refresh(store: self)
    }
}

@available(*, unavailable)
extension RedisDonationStore: Sendable {}

/// Writes on their way (`RedisDonationStore.startWrite`): sent, and their replicas waited for, on a thread of their
/// own.
final class PendingWrite: Sendable {
    /// The replicas the writes wait for.
    let replicas: Int
    private let sentAt = ContinuousClock.now
    /// Signalled once the replies came, or the run ended without them.
    private let answered = DispatchSemaphore(value: 0)
    /// Signalled once the run ended.
    private let ended = DispatchSemaphore(value: 0)
    private let state = Mutex(State())

    private struct State: Sendable {
        var replies: [RedisValue]?
        var outcome: Result<RedisDonationStore.WriteOutcome, RedisError>?
        var endedAt: ContinuousClock.Instant?
    }

    fileprivate init(_ commands: [RedisCommand], through client: RedisClusterClient, waitingFor replicas: Int) {
        self.replicas = replicas
        DispatchQueue.global().async { [self] in
            let result = Result { () throws(RedisError) in
                try RedisDonationStore.send(commands, through: client, waitingFor: replicas) { [self] replies in
                    state.withLock { $0.replies = replies }
                    answered.signal()
                }
            }
            let answeredEarly = state.withLock { state in
                state.outcome = result
                state.endedAt = .now
                return state.replies != nil
            }
            if !answeredEarly { answered.signal() }
            ended.signal()
        }
    }

    /// The replies, as soon as every command has its own, or the error that ended the run before.
    func replies() -> Result<[RedisValue], RedisError> {
        answered.wait()
        // Signalled again for a later call.
        answered.signal()
        return state.withLock { state in
            if let replies = state.replies { return .success(replies) }
            // Set before `answered` was signalled without replies.
            return state.outcome!.map(\.replies)
        }
    }

    /// The outcome, once the replicas answered too.
    func outcome() -> Result<RedisDonationStore.WriteOutcome, RedisError> {
        ended.wait()
        ended.signal()
        return state.withLock { $0.outcome! }
    }

    /// How long the writes and their `WAIT`s took (once they ended).
    var took: Duration {
        (state.withLock { $0.endedAt } ?? .now) - sentAt
    }
}
