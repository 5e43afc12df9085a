import SuggestTestSupport
import Testing

@testable import SuggestCore

/// Dates and rounded numbers are written into JSON as bytes, without a string each; the text must stay exactly what
/// the string formatting gave (export bytes, `list --json` and the server's bodies depend on it). The references
/// below are that formatting as it was, kept here to compare against.
@Suite struct ByteFormattingTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func datesAreWrittenAsTheyWereFormatted(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let earliest = Timestamp.earliest.seconds - 86_400
        let latest = Timestamp.latest.seconds + 86_400
        var moments: [Double] = [0, -1, 1e-6, -1e-6, 1_796_000_000.5, earliest, latest, earliest - 1, latest + 1, 1e300]
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: moments.append(Double.random(in: earliest...latest, using: &random))
            case 1: moments.append(Double(Int.random(in: -2_000_000_000...4_000_000_000, using: &random)))
            case 2:
                let micros = Int.random(in: -2_000_000_000_000_000...4_000_000_000_000_000, using: &random)
                moments.append(Double(micros) / 1e6)
            default: moments.append(Double(Int.random(in: 0...3_000_000_000, using: &random)) + 0.125)
            }
        }
        for seconds in moments {
            let moment = Timestamp(seconds: seconds)
            #expect(moment.rfc3339 == Self.referenceRFC3339(seconds), "\(seconds)")
            var writer = JSONWriter()
            writer.string(rfc3339: moment)
            #expect(writer.text == "\"" + Self.referenceRFC3339(seconds) + "\"", "\(seconds)")
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func roundedNumbersAreWrittenAsTheyWereFormatted(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var values: [Double] = [0, -0.0, 1, -1, 0.5, 9.999_995, 99.5, 1e15, 1e-300, .infinity, -.infinity, .nan, 123_456_789]
        for _ in 0..<20_000 {
            let mantissa = Double.random(in: 1..<10, using: &random)
            let exponent = Double(Int.random(in: -20...18, using: &random))
            let sign: Double = Bool.random(using: &random) ? 1 : -1
            values.append(sign * mantissa * pow10(exponent))
        }
        for value in values {
            for digits in [0, 1, 2, 3, 6, 9, 17] {
                let reference = Self.referenceDecimal(value, significantDigits: digits)
                #expect(JSONWriter.decimal(value, significantDigits: digits) == reference, "\(value), \(digits)")
                var writer = JSONWriter()
                writer.number(value, significantDigits: digits)
                #expect(writer.text == reference, "\(value), \(digits)")
            }
        }
    }

    private func pow10(_ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(abs(exponent)) { result *= 10 }
        return exponent < 0 ? 1 / result : result
    }

    // MARK: The string formatting as it was

    static func referenceRFC3339(_ seconds: Double) -> String {
        guard seconds >= Timestamp.earliest.seconds - 86_400, seconds <= Timestamp.latest.seconds + 86_400 else {
            return JSONWriter.format(seconds)
        }
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
        let wholeSeconds = Int(whole)
        let days = wholeSeconds >= 0 ? wholeSeconds / 86_400 : (wholeSeconds - 86_399) / 86_400
        let secondsOfDay = wholeSeconds - days * 86_400
        let (year, month, day) = Timestamp.civilFromDays(days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(secondsOfDay / 3600, 2) + ":" + pad(secondsOfDay / 60 % 60, 2) + ":" + pad(secondsOfDay % 60, 2)
        if fraction > 0 {
            var digitsText = pad(Int(fraction), digits)
            while digitsText.hasSuffix("0") { digitsText.removeLast() }
            text += "." + digitsText
        }
        return text + "Z"
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    static func referenceDecimal(_ value: Double, significantDigits: Int) -> String {
        guard value.isFinite, value != 0, significantDigits > 0 else { return JSONWriter.format(value) }
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
        guard fractionDigits <= 17, abs(value) < 1e15 else { return JSONWriter.format(value) }
        if fractionDigits < 0 {
            var unit = 1.0
            for _ in 0..<(-fractionDigits) { unit *= 10 }
            return JSONWriter.format((value / unit).rounded() * unit)
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
}
