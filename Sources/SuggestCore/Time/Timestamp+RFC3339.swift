extension Timestamp {
    /// Parses an RFC 3339 / ISO 8601 date-time with a zone, such as `2026-11-29T18:03:00Z` or
    /// `2026-11-29T19:03:00.250+01:00`.
    ///
    /// A space may stand for the `T` (RFC 3339 allows it) and `z` for `Z`. A date without a zone is refused: its
    /// moment would depend on the machine that reads it.
    /// - Returns: `nil` when `text` is not such a date-time or names an impossible date (February 30th).
    /// - Complexity: O(n) in the length of `text`.
    public init?(rfc3339 text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Timestamp(rfc3339UTF8: $0) }) else { return nil }
        self = parsed
    }

    /// Parses an RFC 3339 date-time, as `init?(rfc3339:)`, from its UTF-8 bytes: the donation decoder reads
    /// dates in place, without making a string of them first.
    public init?(rfc3339UTF8 text: UnsafeBufferPointer<UInt8>) {
        var bytes = text[...]
        func number(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for byte in bytes.prefix(count) {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            bytes = bytes.dropFirst(count)
            return value
        }
        func expect(_ options: [UInt8]) -> Bool {
            guard let first = bytes.first, options.contains(first) else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(4), expect([45]), let month = number(2), expect([45]), let day = number(2),
            expect([84, 116, 32]), let hour = number(2), expect([58]), let minute = number(2), expect([58]),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Timestamp.daysIn(month: month, year: year),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if bytes.first == 46 {  // "."
            bytes = bytes.dropFirst()
            // Digits beyond nanoseconds are read past: a Double cannot hold them next to a date anyway.
            var numerator = 0
            var denominator = 1
            var digits = 0
            while let byte = bytes.first, byte >= 48, byte <= 57 {
                if digits < 9 {
                    numerator = numerator * 10 + Int(byte - 48)
                    denominator *= 10
                }
                digits += 1
                bytes = bytes.dropFirst()
            }
            guard digits > 0 else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }
        var offset = 0
        if expect([90, 122]) {  // "Z" or "z"
            offset = 0
        } else if let sign = bytes.first, sign == 43 || sign == 45 {  // "+" or "-"
            bytes = bytes.dropFirst()
            guard let offsetHours = number(2), expect([58]), let offsetMinutes = number(2), offsetHours <= 23,
                offsetMinutes <= 59
            else { return nil }
            offset = (offsetHours * 60 + offsetMinutes) * 60 * (sign == 45 ? -1 : 1)
        } else {
            return nil
        }
        guard bytes.isEmpty else { return nil }
        let days = Timestamp.daysFromCivil(year: year, month: month, day: day)
        // A leap second (:60) is read as the first instant of the next minute, as most clocks do.
        let whole = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        self.init(seconds: Double(whole) + fraction)
    }

    /// The moment in RFC 3339 form, in UTC, with as many fractional digits (up to six) as it needs.
    ///
    /// Parsing the result gives back the same text when it is formatted again, which keeps `export` stable.
    public var rfc3339: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The moment as `rfc3339` writes it and parsing reads it back: to the microsecond near today (fewer digits
    /// centuries away). What every store records a donation's date as, so that exporting and importing gives the
    /// same store, and two stores given one history rank it alike (an import that kept a date's nanoseconds ranked
    /// otherwise than the store that rounded them, with the same export). Moments `rfc3339` writes as Unix seconds
    /// are kept as they are.
    public var atExportPrecision: Timestamp {
        guard isWrittenAsDate else { return self }
        let (whole, fraction, digits) = writtenParts
        // As the parser adds them: the whole seconds, and the fraction's digits over their power of ten (a
        // division rounded once, so its trailing zeros do not change it).
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return Timestamp(seconds: whole + fraction / scale)
    }

    /// Whether `rfc3339` writes the moment as a date: a value built in code far outside the parser's range is
    /// written as Unix seconds rather than trapping on an integer conversion.
    private var isWrittenAsDate: Bool {
        seconds >= Timestamp.earliest.seconds - 86_400 && seconds <= Timestamp.latest.seconds + 86_400
    }

    /// The whole seconds and the fraction's digits (as a whole number, of `digits` digits) that `rfc3339` writes.
    ///
    /// Whole seconds and the fraction are split before any scaling: `seconds * 1e6` would round away the
    /// microseconds of dates far from 1970. The fraction gets only as many digits as the `Double` can hold stably
    /// at this magnitude (six near today, fewer centuries away), so formatting what was parsed from this text
    /// gives this text again.
    private var writtenParts: (whole: Double, fraction: Double, digits: Int) {
        var whole = seconds.rounded(.down)
        var digits = 6
        var scale = 1_000_000.0
        while digits > 0 && 1 / scale <= 4 * seconds.ulp {
            digits -= 1
            scale /= 10
        }
        var fraction = ((seconds - whole) * scale).rounded()
        if fraction >= scale {
            whole += 1
            fraction -= scale
        }
        return (whole, fraction, digits)
    }

    /// Appends `rfc3339`'s UTF-8 to `bytes`: what JSON output uses, one date per donation or suggestion, without a
    /// string of its own for each.
    public func appendRFC3339(to bytes: inout [UInt8]) {
        // Only moments that RFC 3339 can write are formatted; anything else (a value built in code, far outside
        // the parser's range) prints as Unix seconds rather than trapping on an integer conversion.
        guard isWrittenAsDate else {
            bytes.append(contentsOf: JSONWriter.format(seconds).utf8)
            return
        }
        let (whole, fraction, digits) = writtenParts
        let wholeSeconds = Int(whole)
        let days = wholeSeconds >= 0 ? wholeSeconds / 86_400 : (wholeSeconds - 86_399) / 86_400
        let secondsOfDay = wholeSeconds - days * 86_400
        let (year, month, day) = Timestamp.civilFromDays(days)
        JSONWriter.appendDigits(year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        JSONWriter.appendDigits(month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        JSONWriter.appendDigits(day, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        JSONWriter.appendDigits(secondsOfDay / 3600, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        JSONWriter.appendDigits(secondsOfDay / 60 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        JSONWriter.appendDigits(secondsOfDay % 60, width: 2, to: &bytes)
        if fraction > 0 {
            // The fraction's digits without their trailing zeros.
            var value = Int(fraction)
            var width = digits
            while value % 10 == 0 {
                value /= 10
                width -= 1
            }
            bytes.append(UInt8(ascii: "."))
            JSONWriter.appendDigits(value, width: width, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    public static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
