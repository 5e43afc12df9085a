/// Writes JSON text with members in the order they are written, so that output is byte-for-byte stable.
///
/// Used for every JSON the tool prints (`export`, `list --json`, `eval --json`) so that the same state always
/// gives the same bytes.
public struct JSONWriter: Sendable {
    /// The UTF-8 written so far. Bytes rather than a `String`: appending many short pieces to a string took two
    /// thirds of `export`'s time.
    public private(set) var bytes: [UInt8] = []
    /// The JSON written so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
    private var needsComma = [false]

    /// An empty writer, ready for one top-level value.
    public init() {}

    /// An empty writer with room for about `capacity` bytes before it grows: a response's body written in one
    /// allocation rather than a doubling array's several, each copying what came before.
    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    private var pendingValueAfterKey = false

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
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
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    /// Closes the innermost open object. Each call must match a `beginObject()`, and a `key(_:)` must not be left
    /// without its value: a close with nothing open traps; an array closed as an object is not checked.
    public mutating func endObject() {
        precondition(needsComma.count > 1, "JSONWriter.endObject() without an open object to close")
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Opens an array: at the top level, as an array element, or as the value of the preceding `key(_:)`.
    public mutating func beginArray() {
        valuePrefix()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    /// Closes the innermost open array. Each call must match a `beginArray()`: a close with nothing open traps.
    public mutating func endArray() {
        precondition(needsComma.count > 1, "JSONWriter.endArray() without an open array to close")
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes a member name; the next value written is its value.
    public mutating func key(_ name: String) {
        separate()
        JSONWriter.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        pendingValueAfterKey = true
    }

    /// Writes a string value, quoted: `"`, `\`, control characters and U+2028/U+2029 escaped.
    public mutating func string(_ value: String) {
        valuePrefix()
        JSONWriter.appendQuoted(value, to: &bytes)
    }

    /// Writes a number as `format(_:)` prints it: a whole number below 10^15 as an integer, others in the shortest
    /// form that reads back to the same `Double`, and `null` for NaN or an infinity (JSON has no such number).
    public mutating func number(_ value: Double) {
        valuePrefix()
        bytes.append(contentsOf: JSONWriter.format(value).utf8)
    }

    /// Writes a number rounded to `significantDigits` significant decimal digits, printed exactly as decimal text
    /// (`5.10277`, never `5.1027700000000005`): scores for people and diffs, not for arithmetic.
    public mutating func number(_ value: Double, significantDigits: Int) {
        valuePrefix()
        JSONWriter.appendDecimal(value, significantDigits: significantDigits, to: &bytes)
    }

    /// Writes a value another writer wrote: `json` must be the bytes of one whole JSON value (a rendering kept to
    /// be written again), as an array element or the value of the preceding `key(_:)`.
    public mutating func written(_ json: [UInt8]) {
        valuePrefix()
        bytes.append(contentsOf: json)
    }

    /// Writes a moment as a string in RFC 3339 form (`Timestamp.rfc3339`).
    public mutating func string(rfc3339 moment: Timestamp) {
        valuePrefix()
        bytes.append(UInt8(ascii: "\""))
        moment.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// `value` rounded to `significantDigits` significant digits as plain decimal text.
    public static func decimal(_ value: Double, significantDigits: Int) -> String {
        var bytes: [UInt8] = []
        appendDecimal(value, significantDigits: significantDigits, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `decimal(_:significantDigits:)`'s UTF-8 to `bytes`, without a string of its own: every score of
    /// every suggestion is written so.
    static func appendDecimal(_ value: Double, significantDigits: Int, to bytes: inout [UInt8]) {
        guard value.isFinite, value != 0, significantDigits > 0 else {
            bytes.append(contentsOf: format(value).utf8)
            return
        }
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
        guard fractionDigits <= 17, abs(value) < 1e15 else {
            bytes.append(contentsOf: format(value).utf8)
            return
        }
        if fractionDigits < 0 {
            var unit = 1.0
            for _ in 0..<(-fractionDigits) { unit *= 10 }
            bytes.append(contentsOf: format((value / unit).rounded() * unit).utf8)
            return
        }
        var scale = 1.0
        var power = 1
        for _ in 0..<fractionDigits {
            scale *= 10
            power *= 10
        }
        let scaled = Int((abs(value) * scale).rounded())
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(scaled / power, width: 1, to: &bytes)
        // The fraction's digits without their trailing zeros, and no point when none is left.
        var fraction = scaled % power
        var width = fractionDigits
        while width > 0 && fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        if width > 0 {
            bytes.append(UInt8(ascii: "."))
            appendDigits(fraction, width: width, to: &bytes)
        }
    }

    /// Appends a non-negative integer in decimal, with leading zeros up to `width` digits.
    static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        precondition(value >= 0, "appendDigits writes non-negative integers")
        var count = 1
        var power = 1
        while power <= value / 10 {
            power *= 10
            count += 1
        }
        if width > count { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - count)) }
        var rest = value
        while power > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / power))
            rest %= power
            power /= 10
        }
    }

    /// Writes an integer in decimal, exactly.
    public mutating func integer(_ value: Int) {
        valuePrefix()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        valuePrefix()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Writes `null`.
    public mutating func null() {
        valuePrefix()
        bytes.append(contentsOf: "null".utf8)
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

    /// Appends `string` as a quoted JSON string: `"`, `\`, control characters and U+2028/U+2029 escaped.
    public static func appendQuoted(_ string: String, to text: inout String) {
        var bytes: [UInt8] = []
        appendQuoted(string, to: &bytes)
        text += String(decoding: bytes, as: UTF8.self)
    }

    static func appendQuoted(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: append them whole rather than scalar by scalar (a third of import's time),
        // scanning their bytes in place where the string has them in one piece (a native or small string), which
        // is several times faster than stepping through `utf8`.
        // 0xE2 starts U+2028 and U+2029, which JavaScript does not allow raw in a string.
        func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0xE2 }
        let escapeFree =
            string.utf8.withContiguousStorageIfAvailable { !$0.contains(where: needsEscape) }
            ?? !string.utf8.contains(where: needsEscape)
        if escapeFree {
            bytes.append(contentsOf: string.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": bytes.append(contentsOf: "\\\"".utf8)
            case "\\": bytes.append(contentsOf: "\\\\".utf8)
            case "\n": bytes.append(contentsOf: "\\n".utf8)
            case "\r": bytes.append(contentsOf: "\\r".utf8)
            case "\t": bytes.append(contentsOf: "\\t".utf8)
            case "\u{2028}": bytes.append(contentsOf: "\\u2028".utf8)
            case "\u{2029}": bytes.append(contentsOf: "\\u2029".utf8)
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    bytes.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                } else {
                    UTF8.encode(scalar) { bytes.append($0) }
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
