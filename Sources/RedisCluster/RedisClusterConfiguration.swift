/// How to reach a Redis Cluster (or one Redis server) and how patient to be with it.
///
/// The password is kept for logging in and never appears in `description` or in any error.
public struct RedisClusterConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// The nodes asked for the cluster's layout first; any one that answers is enough.
    public var seeds: [RedisEndpoint]
    /// The ACL user name (`AUTH USER PASSWORD`); `nil` logs in as the default user (`AUTH PASSWORD`).
    public var username: String?
    /// The password; `nil` sends no `AUTH`.
    public var password: String?
    /// How long a TCP connection may take to open.
    public var connectTimeout: Duration
    /// How long one reply may take once its command is written; also how long a caller waits for a free pooled
    /// connection. A timed-out connection is closed, never reused.
    public var commandTimeout: Duration
    /// How long a command keeps being retried while the cluster cannot serve it: `CLUSTERDOWN`, `TRYAGAIN`,
    /// `LOADING`, a master that does not answer until its replica takes over. Make it longer than the cluster's
    /// `cluster-node-timeout` plus an election (about twice the node timeout).
    public var retryTimeout: Duration
    /// How many `MOVED` and `ASK` redirections one command follows at once; past them it waits and reads the
    /// layout again between tries (a slot whose move is being finished), until `retryTimeout`, then
    /// ``RedisError/tooManyRedirects(count:last:)``.
    public var maxRedirects: Int
    /// The most connections open to one node at once. A caller that finds them all busy waits (at most
    /// `commandTimeout`) for one to come back.
    public var connectionsPerNode: Int
    /// Whether a standalone server (`cluster support disabled`) is refused with ``RedisError/notACluster(_:reason:)``
    /// instead of being served as one node that owns every slot.
    public var requiresCluster: Bool

    /// A configuration with the usual limits.
    /// - Parameters:
    ///   - seeds: at least one node of the cluster, or the one standalone server.
    ///   - username: the ACL user, or `nil` for the default user.
    ///   - password: the password, or `nil` for none.
    public init(seeds: [RedisEndpoint], username: String? = nil, password: String? = nil) {
        self.seeds = seeds
        self.username = username
        self.password = password
        connectTimeout = .seconds(2)
        commandTimeout = .seconds(5)
        retryTimeout = .seconds(10)
        maxRedirects = 5
        connectionsPerNode = 8
        requiresCluster = false
    }

    /// Checks the limits and the seeds.
    /// - Throws: ``RedisError/invalidConfiguration(_:)`` naming the first setting that cannot work.
    public func validate() throws(RedisError) {
        guard !seeds.isEmpty else { throw .invalidConfiguration("no seed node: give at least one HOST:PORT") }
        for seed in seeds where seed.host.isEmpty || !(1...65535).contains(seed.port) {
            throw .invalidConfiguration("seed \(seed) is not a HOST:PORT with a port in 1...65535")
        }
        guard connectTimeout > .zero, commandTimeout > .zero else {
            throw .invalidConfiguration("the connect and command timeouts must be longer than zero")
        }
        guard retryTimeout >= .zero else { throw .invalidConfiguration("the retry timeout must not be negative") }
        guard maxRedirects >= 1 else { throw .invalidConfiguration("maxRedirects must be at least 1") }
        guard connectionsPerNode >= 1 else { throw .invalidConfiguration("connectionsPerNode must be at least 1") }
        if password == nil && username != nil {
            throw .invalidConfiguration("a user name needs a password: redis://USER:PASSWORD@HOST:PORT")
        }
    }

    /// The seeds, the user name and whether there is a password, never the password itself.
    public var description: String {
        var text = "redis://"
        if password != nil { text += (username ?? "") + ":***@" }
        text += seeds.map(\.description).joined(separator: ",")
        return text
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
