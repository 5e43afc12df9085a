/// Writes JSON text with members in the order they are written, so that output is byte-for-byte stable.
///
/// Used for every JSON the tool prints (`export`, `list --json`, `eval --json`) so that the same state always
/// gives the same bytes.
public struct JSONWriter: Sendable {
    public private(set) var text = ""
    private var needsComma = [false]

    public init() {}

    private var pendingValueAfterKey = false

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { text += "," }
        needsComma[needsComma.count - 1] = true
    }

    /// Before a value: a comma between array elements, nothing right after a member name.
    private mutating func valuePrefix() {
        if pendingValueAfterKey {
            pendingValueAfterKey = false
        } else {
            separate()
        }
    }

    /// Opens an object: at the top level, as an array element, or as the value of the preceding `key(_:)`.
    public mutating func beginObject() {
        valuePrefix()
        text += "{"
        needsComma.append(false)
    }

    public mutating func endObject() {
        needsComma.removeLast()
        text += "}"
    }

    /// Opens an array: at the top level, as an array element, or as the value of the preceding `key(_:)`.
    public mutating func beginArray() {
        valuePrefix()
        text += "["
        needsComma.append(false)
    }

    public mutating func endArray() {
        needsComma.removeLast()
        text += "]"
    }

    /// Writes a member name; the next value written is its value.
    public mutating func key(_ name: String) {
        separate()
        JSONWriter.appendQuoted(name, to: &text)
        text += ":"
        pendingValueAfterKey = true
    }

    public mutating func string(_ value: String) {
        valuePrefix()
        JSONWriter.appendQuoted(value, to: &text)
    }

    public mutating func number(_ value: Double) {
        valuePrefix()
        text += JSONWriter.format(value)
    }

    /// Writes a number rounded to `significantDigits` significant decimal digits, printed exactly as decimal text
    /// (`5.10277`, never `5.1027700000000005`): scores for people and diffs, not for arithmetic.
    public mutating func number(_ value: Double, significantDigits: Int) {
        valuePrefix()
        text += JSONWriter.decimal(value, significantDigits: significantDigits)
    }

    /// `value` rounded to `significantDigits` significant digits as plain decimal text.
    public static func decimal(_ value: Double, significantDigits: Int) -> String {
        guard value.isFinite, value != 0, significantDigits > 0 else { return format(value) }
        var exponent = 0
        var magnitude = abs(value)
        while magnitude >= 10 {
            magnitude /= 10
            exponent += 1
        }
        while magnitude < 1 {
            magnitude *= 10
            exponent -= 1
        }
        let fractionDigits = significantDigits - 1 - exponent
        // Beyond the range where this is exact and readable, the shortest round-trip form is better.
        guard fractionDigits <= 17, abs(value) < 1e15 else { return format(value) }
        if fractionDigits < 0 {
            var unit = 1.0
            for _ in 0..<(-fractionDigits) { unit *= 10 }
            return format((value / unit).rounded() * unit)
        }
        var scale = 1.0
        for _ in 0..<fractionDigits { scale *= 10 }
        let scaled = Int((abs(value) * scale).rounded())
        var digits = String(scaled)
        if fractionDigits > 0 {
            if digits.count <= fractionDigits {
                digits = String(repeating: "0", count: fractionDigits - digits.count + 1) + digits
            }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -fractionDigits))
            while digits.hasSuffix("0") { digits.removeLast() }
            if digits.hasSuffix(".") { digits.removeLast() }
        }
        return (value < 0 ? "-" : "") + digits
    }

    public mutating func integer(_ value: Int) {
        valuePrefix()
        text += String(value)
    }

    public mutating func bool(_ value: Bool) {
        valuePrefix()
        text += value ? "true" : "false"
    }

    public mutating func null() {
        valuePrefix()
        text += "null"
    }

    /// Writes a whole parsed value.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number): self.number(number)
        case .string(let string): self.string(string)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for member in members {
                key(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    /// Numbers print as integers when they are whole and small enough, otherwise in Swift's shortest
    /// round-tripping form.
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }

    public static func appendQuoted(_ string: String, to text: inout String) {
        text += "\""
        // Most strings need no escape: append them whole rather than scalar by scalar (a third of import's time).
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }) {
            text += string
            text += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{2028}": text += "\\u2028"
            case "\u{2029}": text += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}
