/// A Lua script, run with `EVALSHA` by its SHA-1 digest so that only the 40-byte digest crosses the network.
///
/// The digest is computed here, once, as Redis computes it; a server that does not have the script (never loaded,
/// restarted, `SCRIPT FLUSH`, a replica promoted since) replies `NOSCRIPT`, and the client loads it on that node and
/// runs it again.
public struct RedisScript: Sendable, Hashable {
    /// The script's source, as sent to `SCRIPT LOAD`.
    public let source: [UInt8]
    /// The SHA-1 of the source, 40 lowercase hexadecimal digits (what `SCRIPT LOAD` returns).
    public let sha1: String

    /// A script from its Lua source.
    /// - Parameter source: the Lua code.
    /// - Complexity: O(n) in the source's length (the digest).
    public init(_ source: String) {
        self.init(bytes: Array(source.utf8))
    }

    /// A script from its source bytes.
    /// - Parameter bytes: the Lua code.
    public init(bytes: [UInt8]) {
        source = bytes
        sha1 = SHA1.hexDigest(of: bytes)
    }
}
