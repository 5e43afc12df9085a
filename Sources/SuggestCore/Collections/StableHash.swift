/// A 64-bit FNV-1a hash of strings that is the same in every process and every version: the store keeps these
/// keys on disk (the identifier buckets, `body_key`), and the replay uses them to find repeated identifiers.
///
/// Not for hostile input's sake (anyone can make two strings collide): every user of a key compares the strings
/// themselves when keys are equal, so a collision costs a comparison, never a wrong answer.
public struct StableHash {
    /// The hash of everything combined so far; FNV-1a's offset basis before anything is.
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// A hash of nothing yet.
    public init() {}

    /// Adds the bytes of `text` and a 0 byte after them, so that ("ab", "c") and ("a", "bc") differ.
    public mutating func combine(_ text: String) {
        var text = text
        text.withUTF8 { combine(utf8: $0) }
    }

    /// Adds UTF-8 bytes and a 0 byte after them, exactly as `combine(_:)` adds the string they spell.
    public mutating func combine(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        var hash = value
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        value = hash &* 0x0000_0100_0000_01b3  // the 0 byte: xor with 0 changes nothing
    }

    /// The key of a sequence of strings, as the signed integer SQLite stores.
    public static func key(_ parts: String...) -> Int64 {
        var hash = StableHash()
        for part in parts { hash.combine(part) }
        return Int64(bitPattern: hash.value)
    }
}
