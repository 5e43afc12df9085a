import SuggestCore

extension ActivationRule {
    /// Reads a rule given inline in JSON, as the server's share route takes it: a predicate string, or the
    /// dictionary form as an object (`{"NSExtensionActivationSupportsImageWithMaxCount": 1}`), with the same checks
    /// as the property-list forms.
    /// - Parameter field: the JSON path of the rule, for errors.
    /// - Throws: `InputError` on `field` for a rule that does not parse, with the rule's own message.
    public init(json: JSONValue, field: String = "rule") throws(InputError) {
        let value = try Self.propertyList(json, field: field, isRule: true)
        do {
            self = try ActivationRule(propertyList: value)
        } catch {
            throw InputError(field: field, message: error.description)
        }
    }

    /// The property-list value a JSON value stands for: whole numbers are integers, others reals.
    /// - Parameter isRule: whether `json` is the rule itself, not a value inside it (which a null may leave out).
    private static func propertyList(
        _ json: JSONValue, field: String, isRule: Bool = false
    ) throws(InputError) -> PropertyListValue {
        switch json {
        case .string(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .number(let number):
            // Below 2^63, where every whole double is an `Int`: larger ones (2^63 - 1 written out reads as 2^63) are
            // reals, which a count takes as `Int.max` (a maximum that bounds nothing, a minimum nothing meets).
            if number == number.rounded(), abs(number) < 0x1p63 { return .integer(Int(number)) }
            return .real(number)
        case .array(let values):
            var items: [PropertyListValue] = []
            for (index, value) in values.enumerated() { items.append(try propertyList(value, field: "\(field)[\(index)]")) }
            return .array(items)
        case .object(let members):
            var dictionary: [String: PropertyListValue] = [:]
            for member in members { dictionary[member.key] = try propertyList(member.value, field: "\(field).\(member.key)") }
            return .dictionary(dictionary)
        case .null:
            throw InputError(
                field: field,
                message: isRule
                    ? "is null; give a predicate string or the dictionary form"
                    : "is null; give a value, or leave the key out")
        }
    }
}
