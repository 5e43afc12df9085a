import SuggestCore

/// One value of a property list (an `Info.plist`), as read from its XML or binary (`bplist00`) form.
///
/// The cases are the property-list types of Apple's DTD. Dictionaries are unordered, as in Core Foundation, so
/// two lists that differ only in the order of their keys are equal: the XML form of a plist and the binary form
/// that `plutil` or Python's `plistlib` writes from it (with sorted keys) compare equal.
public enum PropertyListValue: Sendable, Hashable {
    /// `<string>`.
    case string(String)
    /// `<integer>`: a signed 64-bit integer (larger values are refused when parsing).
    case integer(Int)
    /// `<real>`: a double, NaN and the infinities included.
    case real(Double)
    /// `<true/>` or `<false/>`.
    case bool(Bool)
    /// `<date>`: a moment, kept as Unix seconds; the binary form counts from 2001-01-01 and is converted.
    case date(Timestamp)
    /// `<data>`: bytes (Base64 in XML).
    case data([UInt8])
    /// `<array>`: values in order.
    case array([PropertyListValue])
    /// `<dict>`: values by key, unordered.
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
    /// The deepest nesting of arrays and dictionaries a value may have, as the parsers read it (a container is one
    /// level): deeper is refused, not recursed into.
    public static let maximumDepth = 128

    /// Whether arrays and dictionaries nest deeper than `maximumDepth` levels in the value; found without
    /// recursion. A value built in code (an extension item's `userInfo`, copied from a host app's) has met no
    /// parser's limit, and the evaluator, equality and hashing all recurse into it: 600 levels overflowed a
    /// 512 KiB stack, a GCD worker thread's.
    public var nestsTooDeep: Bool {
        var containers: [(value: PropertyListValue, depth: Int)] = [(self, 1)]
        while let (value, depth) = containers.popLast() {
            switch value {
            case .array(let elements):
                guard depth <= Self.maximumDepth else { return true }
                containers.append(contentsOf: elements.map { ($0, depth + 1) })
            case .dictionary(let members):
                guard depth <= Self.maximumDepth else { return true }
                containers.append(contentsOf: members.values.map { ($0, depth + 1) })
            default: continue
            }
        }
        return false
    }
}
