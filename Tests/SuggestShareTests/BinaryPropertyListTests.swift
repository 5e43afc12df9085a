import SuggestCore
import Testing

@testable import SuggestShare

@Suite("Binary property lists")
struct BinaryPropertyListTests {
    @Test("the binary Telegram sample parses to the same value as its XML source")
    func binaryEqualsXML() throws {
        let xml = try PropertyListValue(parsing: Fixtures.bytes("telegram.plist"))
        let binaryBytes = try Fixtures.bytes("telegram.binary.plist")
        #expect(binaryBytes.starts(with: Array("bplist00".utf8)))
        let binary = try PropertyListValue(parsing: binaryBytes)
        #expect(binary == xml)
    }

    @Test("scalars of every width")
    func scalars() throws {
        var builder = BinaryPlistBuilder()
        let keys = ["u8", "u16", "u32", "i64", "i128", "f32", "f64", "date", "data", "ascii", "utf16", "yes", "set"]
            .map { builder.add(BinaryPlistBuilder.marker(0x5, count: $0.utf8.count) + Array($0.utf8)) }
        var values: [Int] = []
        values.append(builder.add([0x10, 0xFF]))
        values.append(builder.add([0x11, 0x01, 0x00]))
        values.append(builder.add([0x12, 0xFF, 0xFF, 0xFF, 0xFF]))
        values.append(builder.add([0x13] + BinaryPlistBuilder.bigEndian(UInt64(bitPattern: -5), width: 8)))
        values.append(builder.add([0x14] + [UInt8](repeating: 0, count: 8) + BinaryPlistBuilder.bigEndian(7, width: 8)))
        values.append(builder.add([0x22] + BinaryPlistBuilder.bigEndian(UInt64(Float(1.5).bitPattern), width: 4)))
        values.append(builder.add([0x23] + BinaryPlistBuilder.bigEndian((-2.25).bitPattern, width: 8)))
        values.append(builder.add([0x33] + BinaryPlistBuilder.bigEndian((86_400.0).bitPattern, width: 8)))
        values.append(builder.add([0x43, 1, 2, 3]))
        values.append(builder.add([0x52, 0x68, 0x69]))
        values.append(builder.add([0x63, 0x00, 0xE9, 0xD8, 0x3D, 0xDE, 0x00]))  // é and U+1F600 as a surrogate pair
        values.append(builder.add([0x09]))
        let element = builder.add([0x08])
        values.append(builder.add([0xC1] + builder.references([element])))
        let top = builder.add(BinaryPlistBuilder.marker(0xD, count: keys.count) + builder.references(keys + values))
        let value = try PropertyListValue(parsing: builder.build(top: top))
        #expect(
            value
                == .dictionary([
                    "u8": .integer(255), "u16": .integer(256), "u32": .integer(4_294_967_295), "i64": .integer(-5),
                    "i128": .integer(7), "f32": .real(1.5), "f64": .real(-2.25),
                    "date": .date(Timestamp(seconds: 978_307_200 + 86_400)), "data": .data([1, 2, 3]),
                    "ascii": .string("hi"), "utf16": .string("é😀"), "yes": .bool(true), "set": .array([.bool(false)]),
                ]))
    }

    @Test("shared objects are parsed once and reused")
    func sharedObjects() throws {
        var builder = BinaryPlistBuilder()
        let shared = builder.add([0x51, 0x78])
        let top = builder.add([0xA3] + builder.references([shared, shared, shared]))
        #expect(
            try PropertyListValue(parsing: builder.build(top: top))
                == .array([.string("x"), .string("x"), .string("x")]))
    }

    @Test("wide offsets and references (2 bytes each)")
    func wideSizes() throws {
        var builder = BinaryPlistBuilder()
        builder.offsetSize = 2
        builder.referenceSize = 2
        let text = builder.add([0x51, 0x7A])
        let top = builder.add([0xA1] + builder.references([text]))
        #expect(try PropertyListValue(parsing: builder.build(top: top)) == .array([.string("z")]))
    }
}
