/// One Redis command: its arguments as bytes, the hash slot it is routed by, and whether running it twice is
/// harmless.
///
/// The arguments live end to end in one byte buffer, with their end offsets beside it: two allocations per
/// command whatever its length, and hiredis reads the arguments from that buffer in place.
///
/// ```swift
/// let get = RedisCommand("GET", key: "user:{42}:name")
/// var add = RedisCommand("ZADD", key: scoresKey, 1.5, "thread-42")
/// var mget = RedisCommand("MGET")
/// for key in keys { mget.appendKey(key) }
/// ```
public struct RedisCommand: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline var bytes: [UInt8]
    @usableFromInline var ends: [Int]
    @usableFromInline var routingSlot: Int = -1

    /// Whether the command may be sent again after a connection broke between writing it and reading its reply,
    /// when it may already have run: true for reads (set from the command's name) and for writes the caller
    /// declares safe to repeat (`SET k v`, an `HSET` of fixed values, a script written to be idempotent).
    ///
    /// A command that the server did not run (a `MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `READONLY`
    /// or `NOSCRIPT` reply, a connection that could not be opened) is always sent again, whatever this says.
    public var isIdempotent: Bool

    /// The script an `EVALSHA` runs, so that a `NOSCRIPT` reply can be answered by loading it.
    var script: RedisScript?

    /// A command with no key: it goes to any master (`PING`, `CLUSTER KEYSLOT`, `INFO`).
    /// - Parameters:
    ///   - name: the command's name, such as `"PING"`.
    ///   - arguments: the arguments after the name.
    @inlinable
    public init<each Argument: RedisArgument>(_ name: String, _ arguments: repeat each Argument) {
        bytes = []
        bytes.reserveCapacity(64)
        ends = []
        ends.reserveCapacity(4)
        isIdempotent = RedisCommand.isReadOnly(name)
        append(name)
        for argument in repeat each arguments { append(argument) }
    }

    /// A command routed by its first argument, the key (`GET key`, `ZADD key score member`).
    /// - Parameters:
    ///   - name: the command's name, such as `"GET"`.
    ///   - key: the key, which decides the hash slot and so the node.
    ///   - arguments: the arguments after the key.
    @inlinable
    public init<Key: RedisArgument, each Argument: RedisArgument>(
        _ name: String, key: Key, _ arguments: repeat each Argument
    ) {
        bytes = []
        bytes.reserveCapacity(64)
        ends = []
        ends.reserveCapacity(4)
        isIdempotent = RedisCommand.isReadOnly(name)
        append(name)
        appendKey(key)
        for argument in repeat each arguments { append(argument) }
    }

    /// `EVALSHA` of `script`, routed by its first key; a `NOSCRIPT` reply is answered by loading the script on that
    /// node and running it again, so a script flushed from the server never surfaces to the caller.
    /// - Parameters:
    ///   - script: the script.
    ///   - keys: the keys the script touches (`KEYS[1]`...); in a cluster they must share one slot.
    ///   - arguments: the other arguments (`ARGV[1]`...).
    /// - Complexity: O(n) in the total length of the keys and arguments.
    public init<Key: RedisArgument, each Argument: RedisArgument>(
        script: RedisScript, keys: [Key], arguments: repeat each Argument
    ) {
        self.init("EVALSHA", script.sha1)
        append(keys.count)
        for key in keys { appendKey(key) }
        for argument in repeat each arguments { append(argument) }
        self.script = script
        isIdempotent = false
    }

    /// `EVALSHA` of a script that takes no key; it runs on any master.
    /// - Parameters:
    ///   - script: the script.
    ///   - arguments: the arguments (`ARGV[1]`...).
    public init<each Argument: RedisArgument>(script: RedisScript, arguments: repeat each Argument) {
        self.init(script: script, keys: [String](), arguments: repeat each arguments)
    }

    /// Adds one argument.
    /// - Parameter argument: the argument's value.
    /// - Complexity: O(n) in the argument's length (amortized).
    @inlinable
    public mutating func append(_ argument: some RedisArgument) {
        argument.appendRedisBytes(to: &bytes)
        ends.append(bytes.count)
    }

    /// Adds arguments.
    /// - Parameter arguments: the arguments, in order.
    @inlinable
    public mutating func append<Arguments: Sequence>(contentsOf arguments: Arguments)
    where Arguments.Element: RedisArgument {
        for argument in arguments { append(argument) }
    }

    /// Adds a key; the first key added decides the command's hash slot. Redis refuses (`CROSSSLOT`) a command whose
    /// keys fall in different slots: give them a common hash tag (`{user42}:a`, `{user42}:b`).
    /// - Parameter key: the key.
    @inlinable
    public mutating func appendKey(_ key: some RedisArgument) {
        let start = bytes.count
        append(key)
        if routingSlot < 0 {
            routingSlot = bytes.withUnsafeBytes {
                RedisHashSlot.slot(ofBytes: UnsafeRawBufferPointer(rebasing: $0[start...]))
            }
        }
    }

    /// The hash slot the command is sent by; `nil` sends it to any master. Set it for a command whose key is not
    /// among its arguments in the usual place (`CLUSTER COUNTKEYSINSLOT`, a `XREAD ... STREAMS key`).
    public var slot: Int? {
        get { routingSlot < 0 ? nil : routingSlot }
        set { routingSlot = newValue.map { $0 & (RedisHashSlot.count - 1) } ?? -1 }
    }

    /// How many arguments the command has, its name included.
    public var argumentCount: Int { ends.count }

    /// The arguments, its name first (copies: for tests and messages, not for the hot path).
    public var arguments: [[UInt8]] {
        var start = 0
        return ends.map { end in
            defer { start = end }
            return Array(bytes[start..<end])
        }
    }

    /// The command's name as sent, for messages.
    public var name: String { String(decoding: bytes[0..<(ends.first ?? 0)], as: UTF8.self) }

    /// The command as `redis-cli` would show it, long arguments cut short.
    public var description: String {
        arguments.map { "\"" + RedisValue.escaped($0.prefix(60)) + ($0.count > 60 ? "…" : "") + "\"" }
            .joined(separator: " ")
    }

    /// Whether a command of this name only reads, so that repeating it is harmless.
    @usableFromInline
    static func isReadOnly(_ name: String) -> Bool {
        if readOnlyNames.contains(name) { return true }
        return name.utf8.contains(where: { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") })
            && readOnlyNames.contains(name.uppercased())
    }

    /// Reads (and the connection commands that change nothing): repeating one changes nothing.
    private static let readOnlyNames: Set<String> = [
        "BITCOUNT", "BITPOS", "DBSIZE", "DUMP", "ECHO", "EXISTS", "GET", "GETBIT", "GETRANGE", "HEXISTS", "HGET",
        "HGETALL", "HKEYS", "HLEN", "HMGET", "HRANDFIELD", "HSCAN", "HSTRLEN", "HVALS", "INFO", "KEYS", "LINDEX",
        "LLEN", "LPOS", "LRANGE", "MGET", "PFCOUNT", "PING", "PTTL", "RANDOMKEY", "SCAN", "SCARD", "SDIFF", "SINTER",
        "SINTERCARD", "SISMEMBER", "SMEMBERS", "SMISMEMBER", "SRANDMEMBER", "SSCAN", "STRLEN", "SUNION", "TIME",
        "TTL", "TYPE", "XLEN", "XRANGE", "XREVRANGE", "ZCARD", "ZCOUNT", "ZLEXCOUNT", "ZMSCORE", "ZRANDMEMBER",
        "ZRANGE", "ZRANGEBYLEX", "ZRANGEBYSCORE", "ZRANK", "ZREVRANGE", "ZREVRANGEBYLEX", "ZREVRANGEBYSCORE",
        "ZREVRANK", "ZSCAN", "ZSCORE", "EXPIRETIME", "PEXPIRETIME", "LCS", "OBJECT", "MEMORY",
    ]
}
