import SuggestCore


/// One recorded donation as its block holds it: what `export` gives back and what recomputation replays, without
/// the conversation (the block's) and the intent (its snapshot row's).
struct StoredDonation: Equatable {
    /// Its place in the store's recording order: `export` writes donations in this order, across conversations.
    var sequence: Int64
    var identifier: String
    var snapshotID: Int64
    var groupIdentifier: String?
    var date: Double
    var direction: InteractionDirection
    var engaged: Bool
    /// The content types joined by newlines, or `nil` for none.
    var contentTypes: String?
}

/// The bytes of a row of `donation_blocks`: consecutive donations of one conversation, in recording order.
///
/// Each donation is written as
/// - its sequence number (an unsigned LEB128 variable-length integer),
/// - its identifier (its length as a variable-length integer, then its UTF-8 bytes),
/// - its snapshot row's id (variable-length),
/// - its group identifier (length plus one, 0 for none, then the bytes),
/// - its date (the 8 bytes of the `Double`, little-endian),
/// - one byte of flags: the direction's code in the low two bits, 4 when it was an engaged suggestion,
/// - its content types joined by newlines (length plus one, 0 for none, then the bytes).
///
/// A donation is about 60 bytes where a row of its own, with three index entries, was about 160: the log of a large
/// import is written once, as a few rows per conversation, and no index of every donation is built.
enum DonationBlock {
    /// A block takes no more donations once it reaches this many bytes, so that it stays within one 4 KiB page of
    /// SQLite (a table's leaf page keeps up to 4,061 bytes of a row before spilling into overflow pages) and `donate`
    /// rewrites one page.
    static let closingSize = 3_900

    /// Appends one donation's encoding to `bytes`.
    static func append(
        sequence: Int64, identifier: String, snapshotID: Int64, groupIdentifier: String?, date: Double,
        direction: InteractionDirection, engaged: Bool, contentTypes: [String], to bytes: inout [UInt8]
    ) {
        appendVarint(UInt64(bitPattern: sequence), to: &bytes)
        appendString(identifier, to: &bytes)
        appendVarint(UInt64(bitPattern: snapshotID), to: &bytes)
        appendOptionalString(groupIdentifier, to: &bytes)
        appendDate(date, to: &bytes)
        bytes.append(flags(direction: direction, engaged: engaged))
        if contentTypes.isEmpty {
            bytes.append(0)
        } else {
            // Joined by newlines without building the joined string.
            var length = contentTypes.count - 1
            for type in contentTypes { length += type.utf8.count }
            appendVarint(UInt64(length + 1), to: &bytes)
            for (index, type) in contentTypes.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: "\n")) }
                appendBytes(of: type, to: &bytes)
            }
        }
    }

    /// Appends a decoded donation's encoding to `bytes` (a block rewritten after a deletion).
    static func append(_ donation: StoredDonation, to bytes: inout [UInt8]) {
        appendVarint(UInt64(bitPattern: donation.sequence), to: &bytes)
        appendString(donation.identifier, to: &bytes)
        appendVarint(UInt64(bitPattern: donation.snapshotID), to: &bytes)
        appendOptionalString(donation.groupIdentifier, to: &bytes)
        appendDate(donation.date, to: &bytes)
        bytes.append(flags(direction: donation.direction, engaged: donation.engaged))
        appendOptionalString(donation.contentTypes, to: &bytes)
    }

    /// The donations of a block, in order.
    /// - Throws: `StoreError.notAStore` when the bytes are not a block.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(StoreError) -> [StoredDonation] {
        var reader = Reader(bytes: bytes)
        var donations: [StoredDonation] = []
        while !reader.isAtEnd {
            guard let donation = reader.donation() else { throw damaged }
            donations.append(donation)
        }
        return donations
    }

    /// Whether the block holds a donation with this identifier, compared byte for byte, without decoding the rest.
    static func contains(identifier: String, in bytes: UnsafeRawBufferPointer) throws(StoreError) -> Bool {
        var reader = Reader(bytes: bytes)
        while !reader.isAtEnd {
            guard reader.skipVarint(), let candidate = reader.string() else { throw damaged }
            if candidate.count == identifier.utf8.count && candidate.elementsEqual(identifier.utf8) { return true }
            guard reader.skipVarint(), reader.skipOptionalString(), reader.skip(8 + 1), reader.skipOptionalString()
            else { throw damaged }
        }
        return false
    }

    private static let damaged = StoreError(.notAStore, "a stored block of donations is damaged; the store needs repair")

    private static func flags(direction: InteractionDirection, engaged: Bool) -> UInt8 {
        UInt8(DonationWriter.code(direction)) | (engaged ? 4 : 0)
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func appendString(_ string: String, to bytes: inout [UInt8]) {
        appendVarint(UInt64(string.utf8.count), to: &bytes)
        appendBytes(of: string, to: &bytes)
    }

    private static func appendOptionalString(_ string: String?, to bytes: inout [UInt8]) {
        guard let string else { return bytes.append(0) }
        appendVarint(UInt64(string.utf8.count) + 1, to: &bytes)
        appendBytes(of: string, to: &bytes)
    }

    /// A string's UTF-8 bytes, copied at once: `append(contentsOf: string.utf8)` appended them one by one, each
    /// with its check of the array's uniqueness (a tenth of a 10M import's writing thread).
    private static func appendBytes(of string: String, to bytes: inout [UInt8]) {
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes.append(contentsOf: Array(string.utf8)) }
    }

    private static func appendDate(_ date: Double, to bytes: inout [UInt8]) {
        var bits = date.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { bytes.append(contentsOf: $0) }
    }

    /// Reads a block's encoding forward; every read fails (`nil` or `false`) rather than read past the end.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset >= bytes.count }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count && shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        mutating func skipVarint() -> Bool { varint() != nil }

        mutating func skip(_ count: Int) -> Bool {
            guard count <= bytes.count - offset else { return false }
            offset += count
            return true
        }

        /// The next `count` bytes, in place.
        mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
        }

        mutating func string() -> UnsafeRawBufferPointer? {
            guard let length = varint(), length <= UInt64(bytes.count) else { return nil }
            return take(Int(length))
        }

        /// `nil` when damaged; `.some(nil)` for an absent string.
        mutating func optionalString() -> String?? {
            guard let length = varint(), length <= UInt64(bytes.count) + 1 else { return nil }
            if length == 0 { return .some(nil) }
            guard let text = take(Int(length) - 1) else { return nil }
            return .some(String(decoding: text, as: UTF8.self))
        }

        mutating func skipOptionalString() -> Bool {
            guard let length = varint(), length <= UInt64(bytes.count) + 1 else { return false }
            return length == 0 || skip(Int(length) - 1)
        }

        mutating func donation() -> StoredDonation? {
            guard let sequence = varint(), let identifier = string(), let snapshot = varint(),
                let group = optionalString(), let date = take(8), let flags = take(1), let types = optionalString()
            else { return nil }
            var bits: UInt64 = 0
            withUnsafeMutableBytes(of: &bits) { $0.copyMemory(from: date) }
            return StoredDonation(
                sequence: Int64(bitPattern: sequence), identifier: String(decoding: identifier, as: UTF8.self),
                snapshotID: Int64(bitPattern: snapshot), groupIdentifier: group,
                date: Double(bitPattern: UInt64(littleEndian: bits)),
                direction: DonationWriter.direction(Int64(flags[0] & 3)), engaged: flags[0] & 4 != 0,
                contentTypes: types)
        }
    }
}
