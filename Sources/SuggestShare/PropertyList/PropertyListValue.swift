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
