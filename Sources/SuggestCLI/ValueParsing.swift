import SuggestCore

/// Parsing of values that several commands take.
///
/// Every numeric option has one grammar: ASCII digits, and for the few that take fractions (days) a `.` and more
/// digits; no sign, no exponent, no spaces, no hexadecimal. `--limit +5` and `--max-age-days 1e3` are refused as
/// `--limit 1e3` is, and the message gives the range. Dates are not options of this kind: they follow the donation
/// format (RFC 3339, or Unix seconds as a JSON number).
package enum ValueParsing {
    /// A whole number in `range`.
    /// - Throws: `CommandError.usage` naming `option` and the range.
    package static func wholeNumber(_ text: String, option: String, in range: ClosedRange<Int>) throws(CommandError) -> Int {
        guard isDecimal(text, fractions: false), let number = Int(text), range.contains(number) else {
            throw CommandError.usage(
                "\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not "
                    + "'\(text.prefix(40))'")
        }
        return number
    }

    /// A number in `range`, fractions allowed (`1.5`).
    /// - Throws: `CommandError.usage` naming `option`, what the number counts, and the range.
    static func number(
        _ text: String, option: String, of unit: String, in range: ClosedRange<Double>
    ) throws(CommandError) -> Double {
        guard isDecimal(text, fractions: true), let number = Double(text), range.contains(number) else {
            throw CommandError.usage(
                "\(option) takes a number of \(unit) from \(JSONWriter.format(range.lowerBound)) to "
                    + "\(JSONWriter.format(range.upperBound)) (fractions allowed, as in 1.5), not '\(text.prefix(40))'")
        }
        return number
    }

    /// Whether `text` is ASCII digits, optionally (with `fractions`) followed by `.` and more digits.
    static func isDecimal(_ text: String, fractions: Bool) -> Bool {
        var digitsBefore = 0
        var digitsAfter = 0
        var seenPoint = false
        for byte in text.utf8 {
            if byte >= 0x30 && byte <= 0x39 {
                if seenPoint { digitsAfter += 1 } else { digitsBefore += 1 }
            } else if byte == UInt8(ascii: "."), fractions, !seenPoint {
                seenPoint = true
            } else {
                return false
            }
        }
        return digitsBefore > 0 && (!seenPoint || digitsAfter > 0)
    }

    /// A date as the contract accepts it: RFC 3339 with a zone, or Unix seconds.
    /// The same rules as the donation JSON: Unix seconds in plain decimal notation (no hex floats, no `nan`), or
    /// RFC 3339 with a zone, within the years 0001 to 9999.
    /// The moment is taken at the precision a store keeps dates in (`Timestamp.atExportPrecision`), so that the
    /// `at` a result echoes is the moment it was ranked at, and a cut-off falls where `export` would write it.
    static func date(_ text: String, option: String) throws(CommandError) -> Timestamp {
        // As long as a donation's date may be as a JSON string, so that both doors refuse the same date text.
        guard text.utf8.count <= Interaction.maximumStringBytes else {
            throw CommandError.usage(
                "\(option): '\(text.prefix(40))…' is \(text.utf8.count) bytes long; the limit is "
                    + "\(Interaction.maximumStringBytes)")
        }
        guard let date = Timestamp(contractText: text) else {
            throw CommandError.usage(
                "\(option): '\(text.prefix(60))' is not a date; use RFC 3339 with a zone (2026-11-30T09:00:00Z) or Unix seconds")
        }
        guard Timestamp.acceptedRange.contains(date) else {
            throw CommandError.usage(
                "\(option): " + Timestamp.outOfRangeMessage("'\(text.prefix(60))'", seconds: Double(text)))
        }
        return date.atExportPrecision
    }

    /// `--at DATE`, or now.
    static func at(_ arguments: ParsedArguments) throws(CommandError) -> Timestamp {
        guard let text = arguments.value("--at") else { return Timestamp.now().atExportPrecision }
        return try date(text, option: "--at")
    }
}
