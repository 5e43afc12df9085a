/// Equality of the bytes, where `==` is Swift's: `String` equality is canonical equivalence, so "Café" with a
/// precomposed "é" equals "Café" with "e" and a combining accent, though the store keeps (and `export` writes) each
/// as it came. Whatever reuses one donation's stored form for another must compare with these.
extension SendMessageIntent {
    /// Whether every field, content types included, holds the same UTF-8 bytes as in `other`.
    public func hasSameBytes(as other: SendMessageIntent) -> Bool {
        Self.same(conversationIdentifier, other.conversationIdentifier)
            && Self.same(speakableGroupName, other.speakableGroupName) && Self.same(serviceName, other.serviceName)
            && Self.same(sender, other.sender) && recipients.count == other.recipients.count
            && zip(recipients, other.recipients).allSatisfy { $0.hasSameBytes(as: $1) }
            && Self.same(image, other.image) && contentTypes.count == other.contentTypes.count
            && zip(contentTypes, other.contentTypes).allSatisfy { Self.same($0, $1) }
    }

    /// The stored properties `hasSameBytes(as:)` compares, by name: a test holds the type to this list, so that a
    /// new property cannot be left out of the comparison unnoticed.
    public static let comparedProperties = [
        "conversationIdentifier", "speakableGroupName", "serviceName", "sender", "recipients", "image",
        "contentTypes",
    ]

    static func same(_ first: String, _ second: String) -> Bool { first.hasSameBytes(as: second) }

    static func same(_ first: String?, _ second: String?) -> Bool { same(first, second, by: same) }

    static func same(_ first: Person?, _ second: Person?) -> Bool { same(first, second) { $0.hasSameBytes(as: $1) } }

    /// Both absent, or both present and the same by `same`.
    static func same<Value>(_ first: Value?, _ second: Value?, by same: (Value, Value) -> Bool) -> Bool {
        switch (first, second) {
        case (nil, nil): return true
        case (let first?, let second?): return same(first, second)
        default: return false
        }
    }
}

extension Person {
    /// Whether every field holds the same UTF-8 bytes as in `other` (see `SendMessageIntent.hasSameBytes(as:)`).
    public func hasSameBytes(as other: Person) -> Bool {
        typealias Same = SendMessageIntent
        let sameHandle = Same.same(personHandle, other.personHandle) { $0.type == $1.type && Same.same($0.value, $1.value) }
        return sameHandle && Same.same(customIdentifier, other.customIdentifier)
            && Same.same(displayName, other.displayName) && Same.same(contactIdentifier, other.contactIdentifier)
            && Same.same(image, other.image) && isMe == other.isMe
    }

    /// The stored properties `hasSameBytes(as:)` compares, by name (see `SendMessageIntent.comparedProperties`).
    public static let comparedProperties = [
        "customIdentifier", "displayName", "personHandle", "contactIdentifier", "image", "isMe",
    ]
}

extension Person.Handle {
    /// The stored properties `Person.hasSameBytes(as:)` compares of a handle.
    public static let comparedProperties = ["value", "type"]
}

extension String {
    /// Whether the two strings are the same UTF-8 bytes, as SQLite compares text: `==` also takes canonically
    /// equivalent spellings ("é" precomposed and "e" with a combining accent) for one, and the store keeps, finds and
    /// deletes identifiers, groups and accounts by their bytes.
    @inlinable package func hasSameBytes(as other: String) -> Bool {
        // Over the contiguous bytes (native and small strings have them): stepping through `utf8` is several times
        // slower, and this runs for most donations of an import.
        if let equal = utf8.withContiguousStorageIfAvailable({ a in
            other.utf8.withContiguousStorageIfAvailable { b in a.count == b.count && a.elementsEqual(b) }
        }), let equal {
            return equal
        }
        return utf8.elementsEqual(other.utf8)
    }
}
