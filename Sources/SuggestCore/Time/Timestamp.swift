import CSystem

/// A moment in time as Unix seconds (fractions allowed), the only clock type the core uses.
///
/// The core avoids Foundation so that `suggest list` starts in a few milliseconds; `Timestamp` is the small
/// piece of `Date` it needs: parsing RFC 3339 and Unix seconds, formatting RFC 3339 in UTC, and arithmetic.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z.
    public var seconds: Double

    /// The moment `seconds` after 1970-01-01T00:00:00Z (before it when negative). Not checked: readers of input
    /// refuse moments outside `acceptedRange`.
    public init(seconds: Double) { self.seconds = seconds }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.seconds < rhs.seconds }

    /// This moment moved by `interval` seconds.
    public func adding(_ interval: Double) -> Timestamp { Timestamp(seconds: seconds + interval) }

    /// The current time from the system clock.
    public static func now() -> Timestamp {
        Timestamp(seconds: SystemClock.read())
    }

    public var description: String { rfc3339 }

    /// The earliest moment input may carry (`acceptedRange`), 0001-01-01T00:00:00Z: years 0001 to 9999 are the range
    /// RFC 3339 can write.
    public static let earliest = Timestamp(seconds: -62_135_596_800)
    /// The latest moment input may carry, 9999-12-31T23:59:59Z.
    public static let latest = Timestamp(seconds: 253_402_300_799)
    /// `earliest...latest`: the dates a donation, a flag or a converted history may carry.
    public static let acceptedRange = earliest...latest

    /// A date as the contract writes one in text (a flag's value, a query item): RFC 3339 with a zone, or Unix
    /// seconds in decimal (digits, a leading minus, a point, an exponent; no hex floats, no `nan`, no `inf`; a
    /// little more than a JSON number allows: `1.` and a leading zero are read as decimal). `nil` for anything else;
    /// the range is the caller's to check (`acceptedRange`), with `outOfRangeMessage`. One reader for the command
    /// line and the server, which had a copy each and disagreed on `1.7e9`.
    public init?(contractText text: String) {
        if let first = text.utf8.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39),
            text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45 }),
            let seconds = Double(text), seconds.isFinite
        {
            self.init(seconds: seconds)
        } else if let parsed = Timestamp(rfc3339: text) {
            self = parsed
        } else {
            return nil
        }
    }

    /// Why a date outside `acceptedRange` is refused: `given` as the input wrote it, with a hint when its number
    /// of seconds is past the range and a date in range read as milliseconds (what JavaScript's `Date.now()`
    /// gives). A number before the year 0001 gets none: read as milliseconds it is a date of the 1960s, which no
    /// clock meant (`-62135596801`).
    public static func outOfRangeMessage(_ given: String, seconds: Double?) -> String {
        let message = "\(given) is outside the years 0001 to 9999"
        guard let seconds, seconds > 0, acceptedRange.contains(Timestamp(seconds: seconds / 1_000)) else {
            return message
        }
        return message + "; as milliseconds it would be \(Timestamp(seconds: seconds / 1_000).rfc3339): give Unix seconds"
    }
}

/// Reads the wall clock without Foundation.
enum SystemClock {
    static func read() -> Double {
        // `timespec_get` via the C library would need Glibc on Linux and Darwin on Apple; `clock_gettime` is
        // in both under the same name.
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
