/// The hash slot of a key, as every Redis Cluster node computes it: CRC16 (XMODEM: polynomial 0x1021, initial value
/// 0, no reflection) of the key, modulo 16384.
///
/// Hash tags: when the key has a `{` and, somewhere after it, a `}` with at least one byte between the two, only the
/// bytes between the first `{` and the first `}` after it are hashed. So `{user1}.a` and `{user1}.b` share a slot,
/// `{}a` hashes whole (empty tag), `{{a}}` hashes `{a`, and `a{b}c{d}` hashes `b`.
public enum RedisHashSlot {
    /// How many slots a cluster has.
    public static let count = 16384

    /// The slot of `key`.
    /// - Parameter key: the key's bytes.
    /// - Returns: a slot in `0..<16384`.
    /// - Complexity: O(n) in the key's length.
    @inlinable
    public static func of(_ key: some Collection<UInt8>) -> Int {
        if let slot = key.withContiguousStorageIfAvailable({ slot(ofBytes: UnsafeRawBufferPointer($0)) }) {
            return slot
        }
        return Array(key).withUnsafeBytes { slot(ofBytes: $0) }
    }

    /// The slot of a key given as text (its UTF-8 bytes).
    /// - Parameter key: the key.
    /// - Returns: a slot in `0..<16384`.
    public static func of(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { slot(ofBytes: UnsafeRawBufferPointer($0)) }
    }

    @usableFromInline
    static func slot(ofBytes key: UnsafeRawBufferPointer) -> Int {
        var hashed = key
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
            let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            hashed = UnsafeRawBufferPointer(rebasing: key[(open + 1)..<close])
        }
        return Int(crc16(hashed) & 0x3FFF)
    }

    /// CRC16/XMODEM, a byte at a time through a 256-entry table.
    static func crc16(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var crc: UInt16 = 0
        table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
            }
        }
        return crc
    }

    /// The table for polynomial 0x1021, built once.
    private static let table: [UInt16] = (0..<256).map { index in
        var value = UInt16(index) << 8
        for _ in 0..<8 { value = value & 0x8000 != 0 ? (value << 1) ^ 0x1021 : value << 1 }
        return value
    }
}
