import SuggestCore

/// The bytes the Redis store keeps for a conversation's record and for each donation: fixed-width little-endian
/// numbers (a `Double`'s bits, so a value read back is the value written, to the bit) and length-prefixed strings.
enum RecordCoding {
    static let recordVersion: UInt8 = 1

    /// A conversation's record, without its preferences (block, "suggest less"), which the store keeps apart.
    static func encode(_ record: ConversationRecord) -> [UInt8] {
        var writer = ByteWriter()
        writer.byte(recordVersion)
        let state = record.state
        for channel in 0..<4 { writer.double(state.channels[channel]) }
        writer.double(state.contentTotal)
        writer.double(state.lastDate.seconds)
        writer.optionalDouble(state.lastOutgoingDate?.seconds)
        writer.integer(state.outgoingCount)
        writer.integer(state.incomingCount)
        writer.integer(state.engagedCount)
        writer.byte(state.isGroup ? 1 : 0)
        writer.optionalString(record.serviceName)
        let kinds = record.contentSums.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        writer.integer(kinds.count)
        for (kind, sum) in kinds {
            writer.string(kind)
            writer.double(sum)
        }
        return writer.bytes
    }

    static func decodeRecord(_ bytes: [UInt8]) throws(StoreError) -> ConversationRecord {
        var reader = ByteReader(bytes)
        guard reader.byte() == recordVersion,
            let c0 = reader.double(), let c1 = reader.double(), let c2 = reader.double(), let c3 = reader.double(),
            let contentTotal = reader.double(), let lastDate = reader.double(), let lastOutgoing = reader.optionalDouble(),
            let outgoing = reader.integer(), let incoming = reader.integer(), let engaged = reader.integer(),
            let isGroup = reader.byte(), let service = reader.optionalString(), let kindCount = reader.integer(),
            kindCount >= 0
        else { throw StoreError.damaged("a conversation's record in Redis") }
        var sums = ContentSums()
        for _ in 0..<kindCount {
            guard let kind = reader.string(), let sum = reader.double() else {
                throw StoreError.damaged("a conversation's record in Redis")
            }
            sums[kind] = sum
        }
        let state = ConversationState(
            channels: SIMD4(c0, c1, c2, c3), contentTotal: contentTotal, lastDate: Timestamp(seconds: lastDate),
            lastOutgoingDate: lastOutgoing.map(Timestamp.init(seconds:)), outgoingCount: outgoing,
            incomingCount: incoming, engagedCount: engaged, lessFeedback: 0, isBlocked: false, isGroup: isGroup != 0)
        return ConversationRecord(state: state, contentSums: sums, serviceName: service)
    }

    /// One recorded donation, as its conversation's list holds it.
    struct Entry: Sendable, Equatable {
        /// Its place in the account's recording order (assigned by the script that records it).
        var sequence: Int64
        var identifier: String
        var groupIdentifier: String?
        var date: Double
        var direction: InteractionDirection
        var engaged: Bool
        /// The content types, in order.
        var contentTypes: [String]
        /// The key of the snapshot (in the conversation's `sn` hash) that says what the intent said of the
        /// conversation.
        var snapshot: String
    }

    /// The entry without its sequence number: the script prefixes `SEQUENCE,` when it records it.
    static func encodeBody(_ entry: Entry) -> [UInt8] {
        var writer = ByteWriter()
        writer.string(entry.identifier)
        writer.optionalString(entry.groupIdentifier)
        writer.double(entry.date)
        writer.byte(entry.direction.storedCode | (entry.engaged ? 0x10 : 0))
        writer.integer(entry.contentTypes.count)
        for type in entry.contentTypes { writer.string(type) }
        writer.string(entry.snapshot)
        return writer.bytes
    }

    /// The entry as the list holds it: the sequence number in decimal, a comma, the body.
    static func encode(_ entry: Entry) -> [UInt8] {
        Array(String(entry.sequence).utf8) + [0x2C] + encodeBody(entry)
    }

    static func decodeEntry(_ bytes: [UInt8]) throws(StoreError) -> Entry {
        guard let comma = bytes.firstIndex(of: 0x2C),
            let sequence = Int64(String(decoding: bytes[0..<comma], as: UTF8.self))
        else { throw StoreError.damaged("a donation in Redis") }
        var reader = ByteReader(Array(bytes[(comma + 1)...]))
        guard let identifier = reader.string(), let group = reader.optionalString(), let date = reader.double(),
            let flags = reader.byte(), let count = reader.integer(), count >= 0
        else { throw StoreError.damaged("a donation in Redis") }
        var types: [String] = []
        for _ in 0..<count {
            guard let type = reader.string() else { throw StoreError.damaged("a donation in Redis") }
            types.append(type)
        }
        guard let snapshot = reader.string() else { throw StoreError.damaged("a donation in Redis") }
        return Entry(
            sequence: sequence, identifier: identifier, groupIdentifier: group, date: date,
            direction: InteractionDirection(storedCode: flags & 0x0F), engaged: flags & 0x10 != 0, contentTypes: types,
            snapshot: snapshot)
    }

    /// The version byte of learned weights as this version writes them: 2, with the stale shares. Version 1 (0.3.2
    /// and before) had one share per expert, read as both its fresh and its stale share (it ranks as then) until
    /// the account is folded again under the new rule (`LearnedPolicy.weightsFingerprint`).
    static let weightsVersion: UInt8 = 2

    /// An account's learned weights: the version byte, the twenty-four numbers (masses for people and groups, then
    /// shares for people and groups, then stale shares for people and groups, channel by channel) as their bits,
    /// then the count of sends.
    static func encode(_ weights: LearnedWeights) -> [UInt8] {
        var writer = ByteWriter()
        writer.byte(weightsVersion)
        for vector in [
            weights.personTotals, weights.groupTotals, weights.personShares, weights.groupShares,
            weights.personStaleShares, weights.groupStaleShares,
        ] {
            for index in 0..<4 { writer.double(vector[index]) }
        }
        writer.integer(weights.targets)
        return writer.bytes
    }

    static func decodeWeights(_ bytes: [UInt8]) throws(StoreError) -> LearnedWeights {
        var reader = ByteReader(bytes)
        let version = reader.byte()
        guard version == 1 || version == weightsVersion else {
            throw StoreError.damaged("an account's learned weights in Redis")
        }
        var vectors: [SIMD4<Double>] = []
        for _ in 0..<(version == 1 ? 4 : 6) {
            var vector = SIMD4<Double>()
            for index in 0..<4 {
                guard let value = reader.double() else {
                    throw StoreError.damaged("an account's learned weights in Redis")
                }
                vector[index] = value
            }
            vectors.append(vector)
        }
        guard let targets = reader.integer(), targets >= 0, reader.offset == bytes.count else {
            throw StoreError.damaged("an account's learned weights in Redis")
        }
        return LearnedWeights(
            personTotals: vectors[0], groupTotals: vectors[1], personShares: vectors[2], groupShares: vectors[3],
            personStaleShares: vectors.count > 4 ? vectors[4] : vectors[2],
            groupStaleShares: vectors.count > 5 ? vectors[5] : vectors[3], targets: targets)
    }

    /// A list of strings (people keys, group identifiers) as one value.
    static func encode(strings: [String]) -> [UInt8] {
        var writer = ByteWriter()
        writer.integer(strings.count)
        for string in strings { writer.string(string) }
        return writer.bytes
    }

    static func decodeStrings(_ bytes: [UInt8]) throws(StoreError) -> [String] {
        var reader = ByteReader(bytes)
        guard let count = reader.integer(), count >= 0 else { throw StoreError.damaged("a list in Redis") }
        var strings: [String] = []
        for _ in 0..<count {
            guard let string = reader.string() else { throw StoreError.damaged("a list in Redis") }
            strings.append(string)
        }
        return strings
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func integer(_ value: Int) {
        withUnsafeBytes(of: Int64(value).littleEndian) { bytes += $0 }
    }

    mutating func double(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 }
    }

    mutating func optionalDouble(_ value: Double?) {
        byte(value == nil ? 0 : 1)
        if let value { double(value) }
    }

    mutating func string(_ value: String) {
        integer(value.utf8.count)
        bytes += value.utf8
    }

    mutating func optionalString(_ value: String?) {
        byte(value == nil ? 0 : 1)
        if let value { string(value) }
    }
}

struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func word() -> UInt64? {
        guard offset + 8 <= bytes.count else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func integer() -> Int? { word().map { Int(Int64(bitPattern: $0)) } }

    mutating func double() -> Double? { word().map(Double.init(bitPattern:)) }

    mutating func optionalDouble() -> Double?? {
        guard let flag = byte() else { return nil }
        guard flag == 1 else { return .some(nil) }
        guard let value = double() else { return nil }
        return .some(value)
    }

    mutating func string() -> String? {
        guard let count = integer(), count >= 0, offset + count <= bytes.count else { return nil }
        defer { offset += count }
        return String(decoding: bytes[offset..<(offset + count)], as: UTF8.self)
    }

    mutating func optionalString() -> String?? {
        guard let flag = byte() else { return nil }
        guard flag == 1 else { return .some(nil) }
        guard let value = string() else { return nil }
        return .some(value)
    }
}
