import CHiredis
import Synchronization

/// A client for a Redis Cluster (or one standalone Redis server) on top of hiredis, safe to share between threads.
///
/// It learns which master serves which of the 16384 hash slots from `CLUSTER SLOTS`, keeps a pool of connections
/// per node, and sends each command to the master of its key's slot. What the cluster says back is followed:
///
/// - `MOVED`: the slot has a new master; the client records it, asks for the whole layout again (several slots
///   usually move together) and sends the command there.
/// - `ASK`: the slot is being migrated and this key may be on the target already; the client sends `ASKING` and the
///   command to the target, once, and leaves its map as it is.
/// - `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `MASTERDOWN`, `READONLY`: the command did not run; it is sent again after
///   a back-off (10 ms, doubling up to 250 ms) until ``RedisClusterConfiguration/retryTimeout`` runs out.
/// - A node that cannot be reached: the client asks any reachable node for the layout and retries, so that the
///   replica promoted in place of a dead master takes its commands as soon as the cluster has failed over.
///
/// A standalone server (one that answers `CLUSTER SLOTS` with "cluster support disabled") is served as one node
/// that owns every slot.
///
/// ## What is retried, and what the caller must guarantee
/// A command is sent again only when the client knows it did not run (every case above), or when it may have run
/// but ``RedisCommand/isIdempotent`` says running it twice is harmless. That second case is a connection that broke
/// after the command was written and before its reply came: a master killed in the middle of a pipeline. Reads are
/// idempotent by their name; a write is retried there only when its builder set `isIdempotent` (a `SET` of a fixed
/// value, an `EVALSHA` of a script that checks whether its work is already done). Any other command gets
/// ``RedisError/connectionLost(_:reason:mayHaveRun:)`` with `mayHaveRun: true`, and the caller decides.
///
/// Redis replicates asynchronously: a write a master acknowledged can be lost if that master dies before a replica
/// copied it, and the replica is promoted. ``pipeline(_:waitingForReplicas:timeout:)`` sends `WAIT` after the
/// commands on every connection it used and reports how many replicas have them all.
///
/// The client ignores SIGPIPE when the process left it at its default action: hiredis writes with `write(2)`, and
/// a server dying between two commands must not end the process.
public final class RedisClusterClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: RedisClusterConfiguration

    let state: Mutex<ClientState>
    /// Spreads keyless commands (`PING`, `CLUSTER KEYSLOT`) over the masters.
    let keylessTurn = Atomic<Int>(0)

    /// A client for the cluster the configuration names. Nothing is connected yet: the first command (or
    /// ``refreshTopology()``) asks the seeds for the layout, so a client can be made while the cluster is down.
    /// - Parameter configuration: the seeds, credentials and limits.
    /// - Throws: ``RedisError/invalidConfiguration(_:)`` when a setting cannot work.
    public init(configuration: RedisClusterConfiguration) throws(RedisError) {
        try configuration.validate()
        self.configuration = configuration
        state = Mutex(ClientState())
        chiredis_ignore_sigpipe_if_default()
    }

    /// A client for the cluster a `redis://` URL names.
    /// - Parameter url: `redis://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT...]`.
    /// - Throws: ``RedisError/invalidConfiguration(_:)`` for a URL that cannot be read.
    public convenience init(url: String) throws(RedisError) {
        try self.init(configuration: RedisClusterConfiguration(url: url))
    }

    // MARK: - Commands

    /// Sends one command to the master of its key's slot (any master for a keyless command) and returns the reply.
    /// - Parameter command: the command.
    /// - Returns: the reply; never ``RedisValue/error(_:)``.
    /// - Throws: the reply's error as ``RedisError`` (``RedisError/outOfMemory(_:message:)``,
    ///   ``RedisError/server(_:message:)``, ...), or the error that kept the command from a reply.
    public func send(_ command: RedisCommand) throws(RedisError) -> RedisValue {
        let outcome = try execute([command], waitingFor: nil)
        return try outcome.replies[0].checked(from: outcome.repliedBy[0])
    }

    /// Sends commands as one pipeline per node and returns their replies in the order of the commands.
    ///
    /// Every node's commands are written before any reply is read, so the nodes work at the same time: the cost is
    /// about one round trip to the slowest node. Each command is redirected on its own (`MOVED`, `ASK`, `TRYAGAIN`);
    /// redirected commands go out again together in the next round, in their original order. Commands for the
    /// same slot keep their order; commands for different slots have none between them, as in any cluster.
    /// - Parameter commands: the commands.
    /// - Returns: one reply per command; a command the server refused has an ``RedisValue/error(_:)`` reply (turn it
    ///   into the typed error with ``RedisValue/checked(from:)``).
    /// - Throws: an error that kept some command from a reply (unreachable cluster, lost connection, timeout); the
    ///   replies already read are then lost, and commands that were sent may have run.
    /// - Complexity: one round trip per redirection round, each writing to every node involved at once.
    public func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisValue] {
        try execute(commands, waitingFor: nil).replies
    }

    /// The replies of a pipeline and how many replicas have its writes.
    public struct ReplicatedReplies: Sendable, Hashable {
        /// One reply per command, in order.
        public var replies: [RedisValue]
        /// The fewest replicas that acknowledged the writes of one connection the pipeline used (`WAIT`'s reply);
        /// every write the pipeline made is on at least this many replicas.
        public var replicas: Int
        /// Whether every `WAIT` answered. `false` when a connection broke while its master waited, or its master
        /// stopped waiting with an error (`replicas` is then 0): the master may be gone with writes no replica had,
        /// and a replica promoted since has none of them.
        public var waitsAnswered = true
        /// The node each reply came from (`nil` for a command without one).
        public var repliedBy: [RedisEndpoint?] = []
    }

    /// Sends a pipeline, then `WAIT replicas timeout` on every connection it used, so that the caller knows whether
    /// its writes would survive the failover of their master.
    /// - Parameters:
    ///   - commands: the commands.
    ///   - replicas: how many replicas to wait for.
    ///   - timeout: how long each node waits for them (`WAIT`'s timeout; zero waits without limit, which Redis allows
    ///     and this client's command timeout then cuts short).
    ///   - repliesRead: called with the replies as soon as every command has its final one, before the `WAIT`s
    ///     answer: the caller may go on meanwhile (this call returns once they answered too).
    /// - Returns: the replies and the number of replicas reached on every node (may be fewer than asked).
    /// - Throws: as ``pipeline(_:)``.
    public func pipeline(
        _ commands: [RedisCommand], waitingForReplicas replicas: Int, timeout: Duration,
        repliesRead: (([RedisValue]) -> Void)? = nil
    ) throws(RedisError) -> ReplicatedReplies {
        let milliseconds = Int(timeout.seconds * 1000)
        let outcome = try execute(
            commands, waitingFor: (max(0, replicas), max(0, milliseconds)), repliesRead: repliesRead)
        return ReplicatedReplies(
            replies: outcome.replies, replicas: outcome.replicas, waitsAnswered: outcome.waitsAnswered,
            repliedBy: outcome.repliedBy)
    }

    /// Runs a Lua script by its digest (`EVALSHA`), loading it on the node first when the node does not have it.
    ///
    /// The script is not retried after a lost connection (it may have run): build the command with
    /// ``RedisCommand/init(script:keys:arguments:)``, set ``RedisCommand/isIdempotent`` and ``send(_:)`` it when the
    /// script is written to be run twice safely.
    /// - Parameters:
    ///   - script: the script.
    ///   - keys: its keys (`KEYS`), all in one slot; the first routes it.
    ///   - arguments: its other arguments (`ARGV`).
    /// - Returns: the script's reply.
    /// - Throws: as ``send(_:)``; a script error is ``RedisError/server(_:message:)`` with Redis's message.
    public func eval<Key: RedisArgument, each Argument: RedisArgument>(
        _ script: RedisScript, keys: [Key], arguments: repeat each Argument
    ) throws(RedisError) -> RedisValue {
        try send(RedisCommand(script: script, keys: keys, arguments: repeat each arguments))
    }

    /// Runs a Lua script that takes no key, on any master.
    /// - Parameters:
    ///   - script: the script.
    ///   - arguments: its arguments (`ARGV`).
    /// - Returns: the script's reply.
    /// - Throws: as ``send(_:)``.
    public func eval<each Argument: RedisArgument>(_ script: RedisScript, arguments: repeat each Argument)
        throws(RedisError) -> RedisValue
    {
        try send(RedisCommand(script: script, arguments: repeat each arguments))
    }

    /// Closes every idle pooled connection (connections in use close when they come back broken, or stay).
    public func closeIdleConnections() {
        let pools = state.withLock { Array($0.pools.values) }
        for pool in pools { pool.closeIdle() }
    }
}

/// What the client shares between its threads, under one lock.
struct ClientState {
    /// The layout last learned; `nil` until the first command or refresh.
    var topology: Topology?
    /// One pool per endpoint ever used and still in the layout (or a seed): kept across refreshes, so a new layout
    /// does not close working connections.
    var pools: [RedisEndpoint: NodePool] = [:]
    /// Whether a thread is asking for the layout now (the others go on with the old one).
    var refreshing = false
    /// When the layout was last installed (monotonic seconds).
    var refreshedAt: Double = 0

    /// The pool for `endpoint`, made on first use.
    mutating func pool(for endpoint: RedisEndpoint, limit: Int) -> NodePool {
        if let pool = pools[endpoint] { return pool }
        let pool = NodePool(endpoint: endpoint, limit: limit)
        pools[endpoint] = pool
        return pool
    }
}
