/// A value that can be one argument of a Redis command: it writes its bytes straight into the command's buffer, so
/// building a command allocates nothing per argument.
public protocol RedisArgument {
    /// Appends the argument's bytes, exactly as the server should receive them.
    /// - Parameter buffer: the command's argument bytes so far.
    func appendRedisBytes(to buffer: inout [UInt8])
}

extension String: RedisArgument {
    /// Appends the string's UTF-8 bytes.
    @inlinable
    public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: utf8) }
}

extension Substring: RedisArgument {
    /// Appends the substring's UTF-8 bytes.
    @inlinable
    public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: utf8) }
}

extension Array: RedisArgument where Element == UInt8 {
    /// Appends the bytes as they are (binary-safe).
    @inlinable
    public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: self) }
}

extension ArraySlice: RedisArgument where Element == UInt8 {
    /// Appends the bytes as they are (binary-safe).
    @inlinable
    public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: self) }
}

extension Int: RedisArgument {
    /// Appends the decimal digits (with a leading `-` when negative), as Redis parses integers.
    @inlinable
    public func appendRedisBytes(to buffer: inout [UInt8]) { Int64(self).appendRedisBytes(to: &buffer) }
}

extension Int64: RedisArgument {
    /// Appends the decimal digits (with a leading `-` when negative), without making a `String`.
    public func appendRedisBytes(to buffer: inout [UInt8]) {
        if self < 0 { buffer.append(UInt8(ascii: "-")) }
        UInt64(self.magnitude).appendRedisBytes(to: &buffer)
    }
}

extension UInt64: RedisArgument {
    /// Appends the decimal digits, without making a `String`.
    public func appendRedisBytes(to buffer: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var count = 0
        var value = self
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[31 - count] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
                count += 1
            } while value != 0
            buffer.append(contentsOf: raw[(32 - count)...])
        }
    }
}

extension Int32: RedisArgument {
    /// Appends the decimal digits.
    @inlinable
    public func appendRedisBytes(to buffer: inout [UInt8]) { Int64(self).appendRedisBytes(to: &buffer) }
}

extension Double: RedisArgument {
    /// Appends the shortest decimal form that reads back as the same `Double` (`0.1`, `1e-05`, `inf`), which
    /// Redis's `strtod` parses exactly: a sorted-set score survives the round trip.
    public func appendRedisBytes(to buffer: inout [UInt8]) { buffer.append(contentsOf: description.utf8) }
}
