import SuggestCore

/// Reads the binary form of a property list (`bplist00`), as `plutil -convert binary1` and Xcode write it.
///
/// Layout: the 8-byte header `bplist00`, the objects, an offset table (one big-endian offset per object), and a
/// 32-byte trailer giving the offset and reference sizes, the object count, the top object and where the offset
/// table starts. Objects refer to each other by index into the offset table.
///
/// Everything is bounds-checked and every error names the byte offset where the problem is. Reference cycles,
/// nesting deeper than `maximumDepth`, counts larger than the file, and documents whose shared references would
/// expand to more than `maximumExpandedObjects` values, or to more than `maximumExpandedBytes` of strings and data,
/// are refused. Supported objects: booleans, integers (up to
/// 64-bit signed), reals, dates, data, ASCII and UTF-16BE strings, arrays, sets (read as arrays) and
/// dictionaries with string keys. `null`, fill bytes and UIDs (keyed archives) are refused.
struct BinaryPropertyListParser {
    static let magicPrefix: [UInt8] = Array("bplist".utf8)
    static let header: [UInt8] = Array("bplist00".utf8)
    static let trailerSize = 32
    /// The deepest nesting of arrays and dictionaries accepted.
    static let maximumDepth = PropertyListValue.maximumDepth
    /// The most values the document may expand to when shared objects are counted every time they are used.
    static let maximumExpandedObjects = 1_000_000
    /// The most bytes of strings and data (keys included) it may expand to, counted the same way: a string of 15 MB
    /// used 32,000 times was one object to the count above and half a terabyte to whoever read every use of it.
    static let maximumExpandedBytes = 64 << 20
    /// Seconds from 1970-01-01 to 2001-01-01, the epoch of binary plist dates.
    static let referenceDateOffset = 978_307_200.0

    private let bytes: [UInt8]
    private var offsetSize = 0
    private var referenceSize = 0
    private var objectCount = 0
    private var offsetTableStart = 0
    /// Parsed objects by index.
    private var cache: [Int: Parsed] = [:]
    /// Objects on the current path from the top object; meeting one again is a cycle.
    private var inProgress: Set<Int> = []

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A parsed object with what the limits need: how many values and bytes it expands to, and how deep it nests.
    private struct Parsed {
        var value: PropertyListValue
        var size = 1
        var height = 0
        var bytes = 0
    }

    /// Parses a whole binary property list.
    /// - Throws: `PropertyListError` with a byte offset.
    /// - Complexity: O(n) in the size of the input: each object is parsed once and then shared.
    static func parse(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListValue {
        var parser = BinaryPropertyListParser(bytes)
        let top = try parser.readTrailer()
        return try parser.object(top, depth: 0).value
    }

    private func error(_ message: String, at offset: Int) -> PropertyListError {
        PropertyListError(position: .byte(offset), message: message)
    }

    /// A big-endian unsigned integer of `width` bytes (1 to 8) at `offset`, which must end by `limit`.
    private func unsigned(at offset: Int, width: Int, limit: Int, what: String) throws(PropertyListError) -> UInt64 {
        guard offset >= 0, width >= 1, width <= 8, offset <= limit - width else {
            throw error("\(what) runs past the end of its section", at: max(0, min(offset, bytes.count)))
        }
        var value: UInt64 = 0
        for position in offset..<(offset + width) { value = value << 8 | UInt64(bytes[position]) }
        return value
    }

    /// Checks the header and trailer and returns the index of the top object.
    private mutating func readTrailer() throws(PropertyListError) -> Int {
        let minimum = Self.header.count + 1 + 1 + Self.trailerSize
        guard bytes.count >= minimum else {
            throw error(
                "truncated: \(bytes.count) bytes is too short for a binary property list "
                    + "(the header and trailer alone take 40)", at: bytes.count)
        }
        guard bytes.starts(with: Self.header) else {
            throw error("unsupported binary property list version (only bplist00 is read)", at: 6)
        }
        let trailer = bytes.count - Self.trailerSize
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize) else {
            throw error("the trailer's offset size is \(offsetSize); it must be 1 to 8", at: trailer + 6)
        }
        guard (1...8).contains(referenceSize) else {
            throw error("the trailer's object reference size is \(referenceSize); it must be 1 to 8", at: trailer + 7)
        }
        let count = try unsigned(at: trailer + 8, width: 8, limit: bytes.count, what: "the object count")
        let top = try unsigned(at: trailer + 16, width: 8, limit: bytes.count, what: "the top object")
        let table = try unsigned(at: trailer + 24, width: 8, limit: bytes.count, what: "the offset table offset")
        guard count >= 1, count <= UInt64(trailer / offsetSize) else {
            throw error(
                "the trailer claims \(count) objects, which cannot fit in \(bytes.count) bytes", at: trailer + 8)
        }
        objectCount = Int(count)
        guard top < count else {
            throw error("the top object \(top) is not among the \(count) objects", at: trailer + 16)
        }
        guard table >= UInt64(Self.header.count + 1), table <= UInt64(trailer - objectCount * offsetSize) else {
            throw error("the offset table offset \(table) lies outside the file's object area", at: trailer + 24)
        }
        offsetTableStart = Int(table)
        return Int(top)
    }

    /// The byte offset of object `reference`, checked to lie in the object area.
    private func offset(of reference: Int) throws(PropertyListError) -> Int {
        let entry = offsetTableStart + reference * offsetSize
        let value = try unsigned(
            at: entry, width: offsetSize, limit: bytes.count - Self.trailerSize, what: "the offset table")
        guard value >= UInt64(Self.header.count), value < UInt64(offsetTableStart) else {
            throw error("object \(reference) has offset \(value), outside the object area", at: entry)
        }
        return Int(value)
    }

    /// Reads the element count of a data, string, array or dictionary object whose marker is at `start`.
    /// - Returns: the count and where the payload begins.
    private func count(marker: UInt8, at start: Int) throws(PropertyListError) -> (count: Int, payload: Int) {
        let nibble = Int(marker & 0x0F)
        guard nibble == 0x0F else { return (nibble, start + 1) }
        let countMarker = start + 1
        guard countMarker < offsetTableStart else { throw error("the object's length is missing", at: start) }
        let lengthMarker = bytes[countMarker]
        guard lengthMarker >> 4 == 0x1, lengthMarker & 0x0F <= 3 else {
            throw error(
                "the object's length must be an integer object, found marker 0x\(hex(lengthMarker))",
                at: countMarker)
        }
        let width = 1 << Int(lengthMarker & 0x0F)
        let value = try unsigned(at: countMarker + 1, width: width, limit: offsetTableStart, what: "the length")
        guard value <= UInt64(Int.max / 2) else {
            throw error("the length \(value) is absurdly large", at: countMarker)
        }
        return (Int(value), countMarker + 1 + width)
    }

    /// Checks that `count` items of `size` bytes fit between `payload` and the offset table.
    private func requireRoom(
        count: Int, size: Int, payload: Int, object start: Int, what: String
    ) throws(PropertyListError) {
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, payload <= offsetTableStart, total <= offsetTableStart - payload else {
            throw error("\(what) of \(count) elements runs past the end of the object area", at: start)
        }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    // MARK: - Objects

    private mutating func object(_ reference: Int, depth: Int) throws(PropertyListError) -> Parsed {
        let start = try offset(of: reference)
        if let cached = cache[reference] {
            // A shared object may be used deeper than where it was first read: check its whole height again.
            guard depth + cached.height <= Self.maximumDepth else {
                throw error("nested deeper than \(Self.maximumDepth) levels", at: start)
            }
            return cached
        }
        guard !inProgress.contains(reference) else {
            throw error("object \(reference) contains itself (a reference cycle)", at: start)
        }
        guard depth <= Self.maximumDepth else {
            throw error("nested deeper than \(Self.maximumDepth) levels", at: start)
        }
        inProgress.insert(reference)
        defer { inProgress.remove(reference) }
        let result = try parseObject(at: start, depth: depth)
        guard result.size <= Self.maximumExpandedObjects else {
            throw error(
                "the property list expands to more than \(Self.maximumExpandedObjects) values "
                    + "through shared references", at: start)
        }
        try checkBytes(result.bytes, at: start)
        cache[reference] = result
        return result
    }

    private mutating func parseObject(at start: Int, depth: Int) throws(PropertyListError) -> Parsed {
        let marker = bytes[start]
        let nibble = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return Parsed(value: .bool(false))
            case 0x09: return Parsed(value: .bool(true))
            case 0x00: throw error("null objects are not property list values", at: start)
            default: throw error("unknown object marker 0x\(hex(marker))", at: start)
            }
        case 0x1:
            return Parsed(value: .integer(try integer(marker: marker, at: start)))
        case 0x2:
            guard nibble == 2 || nibble == 3 else {
                throw error("a real must take 4 or 8 bytes (marker 0x\(hex(marker)))", at: start)
            }
            let bits = try unsigned(at: start + 1, width: 1 << nibble, limit: offsetTableStart, what: "the real")
            let value =
                nibble == 2 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits))) : Double(bitPattern: bits)
            return Parsed(value: .real(value))
        case 0x3:
            guard marker == 0x33 else { throw error("unknown date marker 0x\(hex(marker))", at: start) }
            let bits = try unsigned(at: start + 1, width: 8, limit: offsetTableStart, what: "the date")
            let seconds = Double(bitPattern: bits)
            guard seconds.isFinite else { throw error("the date is not a finite number of seconds", at: start) }
            return Parsed(value: .date(Timestamp(seconds: seconds + Self.referenceDateOffset)))
        case 0x4:
            let (length, payload) = try count(marker: marker, at: start)
            try requireRoom(count: length, size: 1, payload: payload, object: start, what: "data")
            return Parsed(value: .data(Array(bytes[payload..<(payload + length)])), bytes: length)
        case 0x5:
            let (length, payload) = try count(marker: marker, at: start)
            try requireRoom(count: length, size: 1, payload: payload, object: start, what: "an ASCII string")
            let slice = bytes[payload..<(payload + length)]
            if let bad = slice.firstIndex(where: { $0 >= 0x80 }) {
                throw error("byte 0x\(hex(bytes[bad])) in an ASCII string", at: bad)
            }
            return Parsed(value: .string(String(decoding: slice, as: UTF8.self)), bytes: length)
        case 0x6:
            let (length, payload) = try count(marker: marker, at: start)
            try requireRoom(count: length, size: 2, payload: payload, object: start, what: "a UTF-16 string")
            return Parsed(value: .string(try utf16String(units: length, at: payload)), bytes: 2 * length)
        case 0x8:
            throw error("UID objects (from NSKeyedArchiver) are not property list values", at: start)
        case 0xA, 0xB, 0xC:
            let (length, payload) = try count(marker: marker, at: start)
            try requireRoom(count: length, size: referenceSize, payload: payload, object: start, what: "an array")
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(length)
            var size = 1
            var height = 0
            var expanded = 0
            for position in 0..<length {
                let child = try reference(at: payload + position * referenceSize)
                let parsed = try object(child, depth: depth + 1)
                size = try add(size, parsed.size, at: start)
                expanded = try checkBytes(expanded + parsed.bytes, at: start)
                elements.append(parsed.value)
                height = max(height, parsed.height + 1)
            }
            return Parsed(value: .array(elements), size: size, height: height, bytes: expanded)
        case 0xD:
            let (length, payload) = try count(marker: marker, at: start)
            try requireRoom(
                count: length, size: 2 * referenceSize, payload: payload, object: start, what: "a dictionary")
            var members: [String: PropertyListValue] = [:]
            members.reserveCapacity(length)
            var size = 1
            var height = 0
            var expanded = 0
            for position in 0..<length {
                let keyEntry = payload + position * referenceSize
                let key = try object(try reference(at: keyEntry), depth: depth + 1)
                guard case .string(let name) = key.value else {
                    throw error("a dictionary key must be a string, found \(key.value.kindName)", at: keyEntry)
                }
                let valueEntry = payload + (length + position) * referenceSize
                let value = try object(try reference(at: valueEntry), depth: depth + 1)
                size = try add(size, value.size + 1, at: start)
                // Counted before the key is hashed into the dictionary: a long key used again and again cost a hash
                // of all of it each time.
                expanded = try checkBytes(expanded + key.bytes + value.bytes, at: start)
                members[name] = value.value
                height = max(height, value.height + 1)
            }
            return Parsed(value: .dictionary(members), size: size, height: height, bytes: expanded)
        default:
            throw error("unknown object marker 0x\(hex(marker))", at: start)
        }
    }

    private func add(_ size: Int, _ more: Int, at start: Int) throws(PropertyListError) -> Int {
        let total = size + more  // both are at most maximumExpandedObjects: no overflow
        guard total <= Self.maximumExpandedObjects else {
            throw error(
                "the property list expands to more than \(Self.maximumExpandedObjects) values "
                    + "through shared references", at: start)
        }
        return total
    }

    /// `bytes` if it is within `maximumExpandedBytes`; each term is, so the sum of two cannot overflow.
    @discardableResult
    private func checkBytes(_ bytes: Int, at start: Int) throws(PropertyListError) -> Int {
        guard bytes <= Self.maximumExpandedBytes else {
            throw error(
                "the property list expands to more than \(Self.maximumExpandedBytes >> 20) MiB of strings and data "
                    + "through shared references", at: start)
        }
        return bytes
    }

    /// An object reference stored at `entry`, checked against the object count.
    private func reference(at entry: Int) throws(PropertyListError) -> Int {
        let value = try unsigned(at: entry, width: referenceSize, limit: offsetTableStart, what: "an object reference")
        guard value < UInt64(objectCount) else {
            throw error("reference to object \(value), but there are only \(objectCount)", at: entry)
        }
        return Int(value)
    }

    private func integer(marker: UInt8, at start: Int) throws(PropertyListError) -> Int {
        let nibble = Int(marker & 0x0F)
        switch nibble {
        case 0, 1, 2:
            // 1, 2 and 4 bytes are unsigned.
            return Int(try unsigned(at: start + 1, width: 1 << nibble, limit: offsetTableStart, what: "the integer"))
        case 3:
            let bits = try unsigned(at: start + 1, width: 8, limit: offsetTableStart, what: "the integer")
            return Int(Int64(bitPattern: bits))
        case 4:
            // 16 bytes: what writers use for unsigned values above Int64.max.
            let high = try unsigned(at: start + 1, width: 8, limit: offsetTableStart, what: "the integer")
            let low = try unsigned(at: start + 9, width: 8, limit: offsetTableStart, what: "the integer")
            let value = Int64(bitPattern: low)
            guard (high == 0 && value >= 0) || (high == UInt64.max && value < 0) else {
                throw error("the integer does not fit in 64 signed bits", at: start)
            }
            return Int(value)
        default:
            throw error("an integer must take 1, 2, 4, 8 or 16 bytes (marker 0x\(hex(marker)))", at: start)
        }
    }

    private func utf16String(units: Int, at payload: Int) throws(PropertyListError) -> String {
        var scalars = String.UnicodeScalarView()
        var position = 0
        func unit(_ index: Int) -> UInt16 {
            UInt16(bytes[payload + 2 * index]) << 8 | UInt16(bytes[payload + 2 * index + 1])
        }
        while position < units {
            let first = unit(position)
            let offset = payload + 2 * position
            if first < 0xD800 || first > 0xDFFF {
                guard let scalar = Unicode.Scalar(UInt32(first)) else {
                    throw error("invalid UTF-16 code unit", at: offset)
                }
                scalars.append(scalar)
                position += 1
            } else {
                guard first <= 0xDBFF, position + 1 < units else {
                    throw error("unpaired UTF-16 surrogate in a string", at: offset)
                }
                let second = unit(position + 1)
                guard (0xDC00...0xDFFF).contains(second) else {
                    throw error("unpaired UTF-16 surrogate in a string", at: offset)
                }
                let value = 0x10000 + (UInt32(first - 0xD800) << 10) + UInt32(second - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else {
                    throw error("invalid UTF-16 surrogate pair", at: offset)
                }
                scalars.append(scalar)
                position += 2
            }
        }
        return String(scalars)
    }
}
