import SuggestCore
import SuggestShare

#if canImport(Glibc)
    import Glibc
#endif

/// The checks the property-list fuzz target makes on one input: the bytes as an extension's Info.plist, XML or
/// binary (`bplist00`), as `suggest share --extension` reads it. Besides "never traps": what parses is written
/// back as XML and parses to an equal value (NaN excepted), and an activation rule inside it is read or refused.
///
/// Known bug, skipped unless `SUGGEST_FUZZ_KNOWN_BUGS=1`: a binary plist may hold a date beyond the years
/// 0001-9999 (any double), which parses, and `xmlDocument` then traps in `Timestamp.rfc3339` (docs/robustness.md).
public enum PropertyListHarness {
    static let skipsKnownBugs = getenv("SUGGEST_FUZZ_KNOWN_BUGS").map { String(cString: $0) } != "1"

    /// The problems found with `bytes`; empty when there are none.
    public static func check(_ bytes: [UInt8]) -> [String] {
        guard let value = try? PropertyListValue(parsing: bytes) else { return [] }
        var problems: [String] = []
        if !value.containsNaN && !(skipsKnownBugs && value.containsDateOutsideRFC3339) {
            let xml = value.xmlDocument
            do {
                if try PropertyListValue(parsing: xml) != value { problems.append("the XML form changed the value") }
            } catch {
                problems.append("the XML form does not parse: \(error)")
            }
        }
        // Wherever a dictionary holds NSExtensionActivationRule, read it as suggest share does.
        if case .dictionary(let members) = value, let rule = members["NSExtensionActivationRule"] {
            _ = try? ActivationRule(propertyList: rule)
        }
        return problems
    }
}

extension PropertyListValue {
    /// Whether a date in the value is outside the years 0001-9999 that RFC 3339 text can hold.
    var containsDateOutsideRFC3339: Bool {
        switch self {
        case .date(let date): return !(date >= Timestamp.earliest && date <= Timestamp.latest)
        case .array(let elements): return elements.contains { $0.containsDateOutsideRFC3339 }
        case .dictionary(let members): return members.values.contains { $0.containsDateOutsideRFC3339 }
        default: return false
        }
    }

    /// Whether a real in the value is not a number (which is unequal to itself, so no round trip can compare it).
    var containsNaN: Bool {
        switch self {
        case .real(let number): return number.isNaN
        case .array(let elements): return elements.contains { $0.containsNaN }
        case .dictionary(let members): return members.values.contains { $0.containsNaN }
        default: return false
        }
    }
}
