/// Arguments gathered before the command they belong to can be written: the `ARGV` of a script whose `KEYS` are
/// still being collected. Stored as a command stores its own (one byte buffer, end offsets beside it), so that
/// appending the list to a command is two copies, whatever its length.
public struct RedisArgumentList: Sendable, Hashable {
    @usableFromInline var bytes: [UInt8] = []
    @usableFromInline var ends: [Int] = []

    /// An empty list.
    public init() {}

    /// How many arguments the list holds.
    public var count: Int { ends.count }

    /// How many bytes its arguments take together.
    public var byteCount: Int { bytes.count }

    /// Adds one argument.
    /// - Parameter argument: the argument's value.
    /// - Complexity: O(n) in the argument's length (amortized).
    @inlinable
    public mutating func append(_ argument: some RedisArgument) {
        argument.appendRedisBytes(to: &bytes)
        ends.append(bytes.count)
    }

    /// Adds every argument of another list, in order.
    /// - Parameter list: the arguments.
    /// - Complexity: O(n) in the other list's bytes and arguments.
    public mutating func append(contentsOf list: RedisArgumentList) {
        let base = bytes.count
        bytes.append(contentsOf: list.bytes)
        ends.reserveCapacity(ends.count + list.ends.count)
        for end in list.ends { ends.append(base + end) }
    }

    /// Empties the list, keeping its storage for the next use.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }
}

extension RedisCommand {
    /// Adds every argument of a list, in order, after the command's own.
    /// - Parameter list: the arguments.
    /// - Complexity: O(n) in the list's bytes and arguments.
    public mutating func append(contentsOf list: RedisArgumentList) {
        let base = bytes.count
        bytes.append(contentsOf: list.bytes)
        ends.reserveCapacity(ends.count + list.ends.count)
        for end in list.ends { ends.append(base + end) }
    }
}
