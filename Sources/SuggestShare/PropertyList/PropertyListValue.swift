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

    /// The most values a value may hold, counted along every path, as the binary parser counts shared objects:
    /// one array shared by itself 40 times over is 2⁴⁰ values to anything that walks it.
    public static let maximumValues = 1_000_000

    /// What keeps a value from being walked: nested past `maximumDepth`, or more than `maximumValues` values.
    public enum Excess: Sendable, Equatable {
        case depth
        case values
    }

    /// Why the value may not be walked, or `nil`; found without recursion, in at most `budget` steps (which it
    /// spends, for several values checked against one budget). A value built in code (an extension item's
    /// `userInfo`, copied from a host app's) has met no parser's limits, and the evaluator, equality and hashing
    /// all recurse into it: 600 levels overflowed a 512 KiB stack, a GCD worker thread's.
    /// - Parameter maximumDepth: the levels allowed, for a value that wraps another.
    public func excess(budget: inout Int, maximumDepth: Int = Self.maximumDepth) -> Excess? {
        var containers: [(value: PropertyListValue, depth: Int)] = [(self, 1)]
        while let (value, depth) = containers.popLast() {
            budget -= 1
            guard budget >= 0 else { return .values }
            switch value {
            case .array(let elements):
                guard depth <= maximumDepth else { return .depth }
                containers.append(contentsOf: elements.lazy.map { ($0, depth + 1) })
            case .dictionary(let members):
                guard depth <= maximumDepth else { return .depth }
                containers.append(contentsOf: members.values.lazy.map { ($0, depth + 1) })
            default: continue
            }
        }
        return nil
    }
}
