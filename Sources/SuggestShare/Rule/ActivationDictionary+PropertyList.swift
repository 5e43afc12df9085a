extension ActivationDictionary {
    /// Reads the dictionary form from the members of `NSExtensionActivationRule`.
    ///
    /// `SupportsText` and `UsesStrictMatching` take a Boolean (an integer is read as iOS reads it, nonzero being
    /// YES); the counts take a non-negative integer (a Boolean or a whole real too, as iOS reads a count with
    /// `intValue`: `<true/>` is 1, and apps ship it); the version takes 1 or 2.
    /// - Throws: `ActivationRuleError.unknownKey` for an undocumented key (keys are checked in sorted order, so
    ///   the error is stable), `.invalidValue` for a value of the wrong type or range.
    /// - Complexity: O(k log k) in the number of keys.
    public init(propertyList members: [String: PropertyListValue]) throws(ActivationRuleError) {
        self.init()
        for name in members.keys.sorted() {
            guard let key = Key(rawValue: name), let value = members[name] else {
                throw ActivationRuleError.unknownKey(name, suggestion: Self.suggestion(for: name))
            }
            switch key {
            case .supportsText: supportsText = try Self.flag(value, key)
            case .usesStrictMatching: usesStrictMatching = try Self.flag(value, key)
            case .dictionaryVersion:
                guard case .integer(let version) = value, version == 1 || version == 2 else {
                    throw ActivationRuleError.invalidValue(
                        key: name, problem: "is \(Self.show(value)); it must be the integer 1 or 2")
                }
                dictionaryVersion = version
            case .webURLMaximumCount: webURLMaximumCount = try Self.count(value, key)
            case .webPageMaximumCount: webPageMaximumCount = try Self.count(value, key)
            case .imageMaximumCount: imageMaximumCount = try Self.count(value, key)
            case .movieMaximumCount: movieMaximumCount = try Self.count(value, key)
            case .fileMaximumCount: fileMaximumCount = try Self.count(value, key)
            case .attachmentsMaximumCount: attachmentsMaximumCount = try Self.count(value, key)
            case .attachmentsMinimumCount: attachmentsMinimumCount = try Self.count(value, key)
            }
        }
    }

    private static func flag(_ value: PropertyListValue, _ key: Key) throws(ActivationRuleError) -> Bool {
        switch value {
        case .bool(let flag): return flag
        // As `NSNumber.boolValue` reads it: any number but 0 is YES.
        case .integer(let number): return number != 0
        default:
            throw ActivationRuleError.invalidValue(
                key: key.rawValue, problem: "is \(show(value)); it must be a Boolean (<true/> or <false/>)")
        }
    }

    private static func count(_ value: PropertyListValue, _ key: Key) throws(ActivationRuleError) -> Int {
        switch value {
        case .integer(let number) where number >= 0: return number
        case .bool(let flag): return flag ? 1 : 0
        case .real(let number) where number >= 0 && number == number.rounded():
            return number < 0x1p63 ? Int(number) : Int.max
        default:
            let zero = key.rawValue.hasSuffix("MaxCount") ? " (0 means not supported)" : ""
            throw ActivationRuleError.invalidValue(
                key: key.rawValue, problem: "is \(show(value)); it must be a non-negative <integer>\(zero)")
        }
    }

    private static func show(_ value: PropertyListValue) -> String {
        switch value {
        case .integer(let number): return "\(number)"
        case .string(let text): return "the string \"\(text.prefix(40))\""
        default: return value.kindName
        }
    }

    /// A documented key that an undocumented one was probably meant to be.
    static func suggestion(for name: String) -> String? {
        let lowered = name.lowercased()
        let keys = Key.allCases.map(\.rawValue)
        if let match = keys.first(where: { $0.lowercased() == lowered }) { return match }
        if let match = keys.first(where: { $0.lowercased().hasPrefix(lowered) }) { return match }
        // The longest documented key the name starts with (SupportsTextWithMinCount → SupportsText).
        return keys.filter { lowered.hasPrefix($0.lowercased()) }.max { $0.count < $1.count }
    }
}
