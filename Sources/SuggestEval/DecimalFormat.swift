/// Fixed-point formatting of numbers for tables and reports, without Foundation's `String(format:)`.
enum DecimalFormat {
    /// `value` rounded to `places` decimals (half away from zero), such as `0.412` for 0.41234 at 3 places.
    static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(value) }
        let digits = String(Int(scaled))
        let sign = value < 0 && scaled > 0 ? "-" : ""
        guard places > 0 else { return sign + digits }
        let padded = String(repeating: "0", count: max(0, places + 1 - digits.count)) + digits
        return sign + padded.dropLast(places) + "." + padded.suffix(places)
    }

    /// `text` padded with spaces to `width` characters, on the left (`right: true`) or on the right.
    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }

    /// A whole number with thin groups of three digits: `119,670`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var text = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { text += "," }
            text.append(character)
        }
        return (value < 0 ? "-" : "") + text
    }
}
