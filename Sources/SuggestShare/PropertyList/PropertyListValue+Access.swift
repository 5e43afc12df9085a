extension PropertyListValue {
    /// The value stored under `key` in a dictionary; `nil` for a missing key or a value that is not a dictionary.
    /// - Complexity: O(1) on average.
    public subscript(key: String) -> PropertyListValue? {
        guard case .dictionary(let members) = self else { return nil }
        return members[key]
    }

    /// The text of a `.string`, or `nil`.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The elements of an `.array`, or `nil`.
    public var arrayValue: [PropertyListValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members of a `.dictionary`, or `nil`.
    public var dictionaryValue: [String: PropertyListValue]? {
        if case .dictionary(let members) = self { return members }
        return nil
    }

    /// A short name of the value's kind for error messages ("expected a dictionary, found a string").
    public var kindName: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .real: return "a real number"
        case .bool(let flag): return flag ? "<true/>" : "<false/>"
        case .date: return "a date"
        case .data: return "data"
        case .array: return "an array"
        case .dictionary: return "a dictionary"
        }
    }
}
