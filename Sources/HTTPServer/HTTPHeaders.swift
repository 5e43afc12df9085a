/// One header field: a name and its value, as sent.
public struct HTTPHeader: Hashable, Sendable {
    /// The field's name, in the case the sender used.
    public var name: String
    /// The field's value, without the whitespace around it.
    public var value: String

    /// A header field.
    /// - Parameters:
    ///   - name: the field's name (a token: no spaces, colons or control characters).
    ///   - value: the field's value (no CR, LF or NUL).
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// The header fields of a request or a response, in order; names compare case-insensitively (ASCII), as HTTP says.
///
/// A name may repeat: `self[name]` gives the first value, `values(for:)` all of them in order.
public struct HTTPHeaders: Sendable, Equatable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    private var fields: [HTTPHeader]

    /// No fields.
    public init() { fields = [] }

    /// The given fields, in order.
    /// - Parameter fields: the fields.
    public init(_ fields: [HTTPHeader]) { self.fields = fields }

    /// Fields from a literal, in its order: `["Content-Type": "application/json"]`.
    /// - Parameter elements: names and values.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { HTTPHeader(name: $0.0, value: $0.1) }
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> HTTPHeader { fields[position] }

    /// The first value of the field `name`, whatever its case, or `nil` when there is none.
    /// - Parameter name: the field's name.
    /// - Complexity: O(*n*) in the number of fields.
    public subscript(name: String) -> String? {
        fields.first { HTTPHeaders.namesMatch($0.name, name) }?.value
    }

    /// Every value of the field `name`, whatever its case, in the order sent.
    /// - Parameter name: the field's name.
    /// - Returns: the values; empty when there is no such field.
    /// - Complexity: O(*n*) in the number of fields.
    public func values(for name: String) -> [String] {
        fields.filter { HTTPHeaders.namesMatch($0.name, name) }.map(\.value)
    }

    /// Whether a field `name` is present, whatever its case.
    /// - Parameter name: the field's name.
    /// - Complexity: O(*n*) in the number of fields.
    public func contains(_ name: String) -> Bool {
        fields.contains { HTTPHeaders.namesMatch($0.name, name) }
    }

    /// Adds a field after the others (a name may repeat).
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: its value.
    public mutating func append(name: String, value: String) {
        fields.append(HTTPHeader(name: name, value: value))
    }

    /// Replaces every field `name` (whatever its case) with one field holding `value`.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: its value.
    /// - Complexity: O(*n*) in the number of fields.
    public mutating func set(name: String, value: String) {
        fields.removeAll { HTTPHeaders.namesMatch($0.name, name) }
        fields.append(HTTPHeader(name: name, value: value))
    }

    /// Removes every field `name`, whatever its case.
    /// - Parameter name: the field's name.
    /// - Complexity: O(*n*) in the number of fields.
    public mutating func remove(name: String) {
        fields.removeAll { HTTPHeaders.namesMatch($0.name, name) }
    }

    /// Whether two field names are equal ignoring ASCII case (field names are ASCII tokens).
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?):
                if x != y && asciiLower(x) != asciiLower(y) { return false }
            default: return false
            }
        }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte | 0x20 : byte
    }
}
