/// Text as a dictionary key compared by its UTF-8 bytes, as SQLite and Redis compare text. A `String` key takes
/// canonically equivalent spellings ("é" precomposed, and "e" with a combining accent) for one, where every store
/// keeps them apart: conversations, accounts and identifiers are whatever bytes the donation carried.
///
/// Keeps the string itself: hashing and comparing read its bytes in place, so a look-up allocates nothing.
package struct ByteKey: Hashable, Sendable {
    /// The text, as given.
    package let string: String

    @inlinable package init(_ string: String) { self.string = string }

    @inlinable package static func == (lhs: ByteKey, rhs: ByteKey) -> Bool { lhs.string.hasSameBytes(as: rhs.string) }

    @inlinable package func hash(into hasher: inout Hasher) {
        // `withUTF8` reads a native string's bytes in place (it copies only a bridged one), so equal bytes always
        // hash alike; then the length, so that two keys hashed in a row, ("ab", "c") and ("a", "bc"), do not feed
        // the hasher the same bytes.
        var text = string
        text.withUTF8 { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            hasher.combine(bytes.count)
        }
    }
}
