import SuggestCore
import Testing

@testable import SuggestShare
import SuggestTestSupport

@Suite("Property list round trips")
struct RoundTripTests {
    /// A random value with up to `depth` levels of nesting.
    static func randomValue(_ generator: inout SeededRandom, depth: Int) -> PropertyListValue {
        let choice = Int.random(in: 0..<(depth > 0 ? 9 : 7), using: &generator)
        switch choice {
        case 0: return .string(randomString(&generator))
        case 1: return .integer(Int.random(in: Int.min...Int.max, using: &generator))
        case 2: return .real(Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 64)
        case 3: return .bool(Bool.random(using: &generator))
        case 4:
            return .date(Timestamp(seconds: Double(Int.random(in: -2_000_000_000...4_000_000_000, using: &generator))))
        case 5:
            return .data(
                (0..<Int.random(in: 0..<20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator)
                })
        case 6: return .string("")
        case 7:
            return .array(
                (0..<Int.random(in: 0..<5, using: &generator)).map { _ in randomValue(&generator, depth: depth - 1) })
        default:
            var members: [String: PropertyListValue] = [:]
            for _ in 0..<Int.random(in: 0..<5, using: &generator) {
                members[randomString(&generator)] = randomValue(&generator, depth: depth - 1)
            }
            return .dictionary(members)
        }
    }

    static func randomString(_ generator: inout SeededRandom) -> String {
        let pieces = ["a", "Z", "0", " ", "<", ">", "&", "\"", "'", "é", "😀", "\t", "\n", "]]>", "&amp;", "ü", "中"]
        return (0..<Int.random(in: 0..<8, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }
            .joined()
    }

    @Test("XML written by xmlDocument parses back to the same value", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func xmlRoundTrip(seed: UInt64) throws {
        var generator = SeededRandom(seed: seed)
        for _ in 0..<50 {
            let value = Self.randomValue(&generator, depth: 4)
            #expect(try PropertyListValue(parsing: value.xmlDocument) == value)
        }
    }

    /// "\r\n" and "<" followed by a combining accent are each one `Character`: escaped by characters, the CR and the
    /// `<` went out as they were (found by a review).
    @Test("XML escapes scalars that share a Character with others")
    func xmlEscapesScalarsInsideCharacters() throws {
        for text in ["line\r\nbreak", "<\u{301}tag>", "&\u{301}amp;"] {
            let value = PropertyListValue.dictionary(["k": .string(text)])
            #expect(try PropertyListValue(parsing: value.xmlDocument) == value, "\(text.unicodeScalars.map(\.value))")
        }
    }

    @Test("binary written by the test writer parses back to the same value", arguments: [11, 12, 13, 14] as [UInt64])
    func binaryRoundTrip(seed: UInt64) throws {
        var generator = SeededRandom(seed: seed)
        for _ in 0..<50 {
            let value = Self.randomValue(&generator, depth: 4)
            #expect(try PropertyListValue(parsing: BinaryPlistBuilder.write(value)) == value)
        }
    }

    @Test(
        "every sample Info.plist survives XML → value → XML → value and value → binary → value",
        arguments: [
            "signal.plist", "telegram.plist", "chromium-open-extension.plist", "olvid.plist",
            "firefox-focus.plist", "element.plist", "wordpress.plist", "apple-pdf-example.plist",
        ])
    func samples(name: String) throws {
        let value = try PropertyListValue(parsing: Fixtures.bytes(name))
        #expect(try PropertyListValue(parsing: value.xmlDocument) == value)
        #expect(try PropertyListValue(parsing: BinaryPlistBuilder.write(value)) == value)
    }
}
