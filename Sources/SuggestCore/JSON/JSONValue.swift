/// A parsed JSON document: what the donation and share-request readers see before they validate it.
///
/// Objects keep their members in document order so that error messages and round trips stay predictable.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as the nearest `Double` (integers above 2^53 lose digits); the parser refuses one that is not
    /// finite.
    case number(Double)
    /// A string, its escapes decoded.
    case string(String)
    /// An array, its elements in document order.
    case array([JSONValue])
    /// An object, its members in document order; a repeated name is kept (the subscript reads the last).
    case object([JSONMember])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a == b
        default: return false
        }
    }

    /// The member named `key` of an object (the last one, if the name repeats); `nil` for other values.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    /// The first name that an object's members repeat (compared byte for byte), or `nil`: for a reader that must
    /// not pick one of two values silently, as the subscript does.
    public var repeatedMemberName: String? {
        guard case .object(let members) = self else { return nil }
        var seen: Set<[UInt8]> = []
        return members.first { !seen.insert(Array($0.key.utf8)).inserted }?.key
    }

    /// A short name of the value's kind, for error messages ("expected a string, found a number").
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// One member of a JSON object. A named struct rather than a tuple: arrays of tuples need their type metadata
/// built at run time, which cost about a tenth of `import`'s parsing time.
public struct JSONMember: Sendable, Equatable {
    /// The member's name, its escapes decoded.
    public var key: String
    /// The member's value.
    public var value: JSONValue

    /// The member `key: value`.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
