@testable import SuggestShare

/// Assembles `bplist00` files from raw object bytes, so tests can build both valid and hostile binary plists.
struct BinaryPlistBuilder {
    var objects: [[UInt8]] = []
    var offsetSize = 1
    var referenceSize = 1

    /// Adds an object's bytes and returns its index.
    @discardableResult
    mutating func add(_ bytes: [UInt8]) -> Int {
        objects.append(bytes)
        return objects.count - 1
    }

    /// The file: header, objects, offset table, trailer.
    func build(top: Int = 0, objectCountOverride: UInt64? = nil, tableOffsetOverride: UInt64? = nil) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        for offset in offsets { bytes += Self.bigEndian(UInt64(offset), width: offsetSize) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        bytes += Self.bigEndian(objectCountOverride ?? UInt64(objects.count), width: 8)
        bytes += Self.bigEndian(UInt64(top), width: 8)
        bytes += Self.bigEndian(tableOffsetOverride ?? UInt64(tableOffset), width: 8)
        return bytes
    }

    static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (width - 1 - $0))) }
    }

    /// A marker byte with its count, using a following integer object when the count exceeds 14.
    static func marker(_ type: UInt8, count: Int) -> [UInt8] {
        if count < 15 { return [type << 4 | UInt8(count)] }
        return [type << 4 | 0x0F, 0x13] + bigEndian(UInt64(count), width: 8)
    }

    func references(_ indices: [Int]) -> [UInt8] {
        indices.flatMap { Self.bigEndian(UInt64($0), width: referenceSize) }
    }

    // MARK: - Writing values

    /// Writes `value` as a binary plist (no sharing of equal objects; UTF-16 for non-ASCII strings).
    static func write(_ value: PropertyListValue) -> [UInt8] {
        var builder = BinaryPlistBuilder()
        builder.referenceSize = 4
        builder.offsetSize = 4
        let top = builder.append(value)
        return builder.build(top: top)
    }

    private mutating func append(_ value: PropertyListValue) -> Int {
        switch value {
        case .bool(let flag): return add([flag ? 0x09 : 0x08])
        case .integer(let number):
            return add([0x13] + Self.bigEndian(UInt64(bitPattern: Int64(number)), width: 8))
        case .real(let number): return add([0x23] + Self.bigEndian(number.bitPattern, width: 8))
        case .date(let date):
            let seconds = date.seconds - BinaryPropertyListParser.referenceDateOffset
            return add([0x33] + Self.bigEndian(seconds.bitPattern, width: 8))
        case .data(let data): return add(Self.marker(0x4, count: data.count) + data)
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                return add(Self.marker(0x5, count: text.utf8.count) + Array(text.utf8))
            }
            let units = Array(text.utf16)
            return add(Self.marker(0x6, count: units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
        case .array(let elements):
            let index = add([])
            let children = elements.map { append($0) }
            objects[index] = Self.marker(0xA, count: children.count) + references(children)
            return index
        case .dictionary(let members):
            let index = add([])
            let keys = members.keys.sorted()
            let keyIndices = keys.map { append(.string($0)) }
            let valueIndices = keys.map { key in append(members[key] ?? .bool(false)) }
            objects[index] = Self.marker(0xD, count: keys.count) + references(keyIndices + valueIndices)
            return index
        }
    }
}
