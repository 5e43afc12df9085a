/// One reply from a Redis server (RESP2, what hiredis 0.14 reads).
///
/// Bulk strings stay bytes: keys and values are binary and the store decides what they mean. An error reply is a
/// value too, so that one failed command in a pipeline does not hide the replies of the others; `send` and `eval`
/// throw it instead, and ``checked(from:)`` turns a pipeline's error value into the same typed error.
public enum RedisValue: Sendable, Hashable {
    /// A bulk string (`$`): binary-safe bytes.
    case bulkString([UInt8])
    /// A simple string (`+`), such as `OK` or `PONG`.
    case simpleString(String)
    /// An integer (`:`).
    case integer(Int64)
    /// An array (`*`) of replies.
    case array([RedisValue])
    /// The null bulk string or null array (`$-1`, `*-1`): a missing key, a timed-out blocking command.
    case null
    /// An error reply (`-`), with the server's message (`WRONGTYPE Operation against a key ...`).
    case error(String)

    /// The bytes of a bulk or simple string; `nil` for any other reply.
    public var bytes: [UInt8]? {
        switch self {
        case .bulkString(let bytes): bytes
        case .simpleString(let text): Array(text.utf8)
        default: nil
        }
    }

    /// A bulk or simple string decoded as UTF-8 (invalid sequences replaced); `nil` for any other reply.
    public var string: String? {
        switch self {
        case .bulkString(let bytes): String(decoding: bytes, as: UTF8.self)
        case .simpleString(let text): text
        default: nil
        }
    }

    /// An integer reply, or a bulk string that holds a decimal integer (`ZSCORE`, `HGET` of a counter); `nil`
    /// otherwise.
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .bulkString(let bytes): Int64(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    /// The elements of an array reply; `nil` for any other reply (a null array included).
    public var array: [RedisValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// Whether the reply is null (a missing key).
    public var isNull: Bool { self == .null }

    /// The server's message when the reply is an error; `nil` otherwise.
    public var errorMessage: String? {
        if case .error(let message) = self { return message }
        return nil
    }

    /// The reply itself, or, when it is an error reply, the typed error it stands for (out of memory, cluster down,
    /// authentication, or a plain server error with the server's message).
    /// - Parameter endpoint: the node that replied, for the error's message.
    /// - Returns: `self` when it is not an error reply.
    /// - Throws: ``RedisError`` for an error reply.
    public func checked(from endpoint: RedisEndpoint? = nil) throws(RedisError) -> RedisValue {
        if case .error(let message) = self { throw RedisError.reply(message, from: endpoint) }
        return self
    }
}

extension RedisValue: CustomStringConvertible {
    /// A short rendering for messages and test failures: strings quoted, bytes that are not printable escaped.
    public var description: String {
        switch self {
        case .bulkString(let bytes):
            return "\"" + RedisValue.escaped(bytes.prefix(200)) + (bytes.count > 200 ? "…" : "") + "\""
        case .simpleString(let text): return text
        case .integer(let value): return "(integer) \(value)"
        case .array(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .null: return "(nil)"
        case .error(let message): return "(error) \(message)"
        }
    }

    static func escaped(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = String(byte, radix: 16)
                text += "\\x" + (digits.count == 1 ? "0" : "") + digits
            }
        }
        return text
    }
}
