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

    /// Content types kept joined by newlines (as `contentTypes`, and the `content_types` column before blocks),
    /// one by one.
    static func contentTypes(joined: String?) -> [String] {
        joined.map { $0.split(separator: "\n").map(String.init) } ?? []
    }
}

/// The bytes of a row of `donation_blocks`: consecutive donations of one conversation, in recording order, each
/// coded against the one before it in the block.
///
/// Each donation is one byte of flags, then its fields:
/// - flags: the direction's code (bits 0–1); engaged (bit 2); the date as milliseconds (bit 3, else the 8 bytes of
///   the `Double`); the identifier's form (bits 4–5: 0 text, 1 a UUID in capitals, 2 a UUID in small letters);
///   the group identifier (bits 6–7: 0 none, 1 the previous donation's, 2 text follows);
/// - the sequence number, as the difference from the previous donation's (the first: from 0), unsigned LEB128;
/// - the identifier: a UUID's 16 bytes, or its length (LEB128) and UTF-8 bytes;
/// - the snapshot row's id, as the zigzag-coded difference from the previous donation's;
/// - the group identifier's length and bytes, when bits 6–7 say so;
/// - the date: the zigzag-coded difference in milliseconds from the previous donation's date in milliseconds, or
///   the `Double`'s 8 bytes, little-endian, when it is not a whole number of milliseconds;
/// - the content types joined by newlines: 0 for none, 1 for the previous donation's, else length plus 2 and the
///   bytes.
///
/// A donation of a typical history (UUID identifier, the group of the one before, a date a few seconds later)
/// takes about 25 bytes: a 10M import writes about 250 MB of blocks, where a row per donation and its three
/// index entries took about 160 bytes a donation.
enum DonationBlock {
    /// A block takes no more donations once it reaches this many bytes, so that it usually stays within one 4 KiB
    /// page of SQLite (a table's leaf page keeps up to 4,061 bytes of a row before spilling into overflow pages) and
    /// `donate` rewrites one page. (The donation that crosses the line stays in the block: one with long strings
    /// takes it into an overflow page.)
    static let closingSize = 3_900

    /// A block takes no donation whose sequence number is this far or farther from its first one: `export` holds
    /// every block that spans its position in the merge, so this bounds its memory by the donations numbered within
    /// this distance on either side (at most about two million, about 50 MB of blocks), whatever the store's size.
    static let maximumSpan: Int64 = 1 << 20

    /// Whether a block that starts at `firstSequence` and holds `size` bytes takes a donation numbered `sequence`.
    static func takes(_ sequence: Int64, size: Int, firstSequence: Int64) -> Bool {
        size < closingSize && sequence &- firstSequence < maximumSpan
    }

    /// The last donation written or read, which the next one is coded against.
    struct Previous {
        var sequence: Int64 = 0
        var snapshotID: Int64 = 0
        var group: [UInt8]?
        var milliseconds: Int64 = 0
        var contentTypes: [UInt8]?
    }

    /// Appends donations to a block's bytes.
    struct Encoder {
        private(set) var bytes: [UInt8] = []
        private var previous = Previous()
        /// The donation `bytes` begin after (the stored part's last), which a reader of `bytes` alone starts from.
        private var before = Previous()

        init() {}

        /// Continues a stored block: `bytes` will hold only what is appended after `stored`, coded against its last
        /// donation, so that a writer need not keep a block's stored part while it adds to it.
        /// - Throws: `StoreError.notAStore` when `stored` is not a block.
        init(following stored: UnsafeRawBufferPointer) throws(StoreError) {
            var reader = Reader(bytes: stored)
            while !reader.isAtEnd { guard reader.skipDonation() else { throw DonationBlock.damaged } }
            previous = reader.previous
            before = previous
        }

        /// Lets go of the bytes appended so far, once they are written: the next donation is still coded against the
        /// last one.
        mutating func removeWritten() {
            bytes = []
            before = previous
        }

        /// Whether `bytes` hold a donation with this identifier (`DonationBlock.contains`).
        func contains(identifier: String) throws(StoreError) -> Bool {
            let found = bytes.withUnsafeBytes {
                try? DonationBlock.contains(identifier: identifier, in: $0, after: before)
            }
            guard let found else { throw DonationBlock.damaged }
            return found
        }

        mutating func append(
            sequence: Int64, identifier: String, snapshotID: Int64, groupIdentifier: String?, date: Double,
            direction: InteractionDirection, engaged: Bool, contentTypes: [String]
        ) {
            var types: [UInt8]?
            if !contentTypes.isEmpty {
                var joined: [UInt8] = []
                for (index, type) in contentTypes.enumerated() {
                    if index > 0 { joined.append(UInt8(ascii: "\n")) }
                    appendBytes(of: type, to: &joined)
                }
                types = joined
            }
            append(
                sequence: sequence, identifier: identifier, snapshotID: snapshotID, groupIdentifier: groupIdentifier,
                date: date, direction: direction, engaged: engaged, joinedContentTypes: types)
        }

        /// Appends a decoded donation (a block rewritten after a deletion).
        mutating func append(_ donation: StoredDonation) {
            append(
                sequence: donation.sequence, identifier: donation.identifier, snapshotID: donation.snapshotID,
                groupIdentifier: donation.groupIdentifier, date: donation.date, direction: donation.direction,
                engaged: donation.engaged, joinedContentTypes: donation.contentTypes.map { Array($0.utf8) })
        }

        private mutating func append(
            sequence: Int64, identifier: String, snapshotID: Int64, groupIdentifier: String?, date: Double,
            direction: InteractionDirection, engaged: Bool, joinedContentTypes types: [UInt8]?
        ) {
            let flagsAt = bytes.count
            var flags = direction.storedCode | (engaged ? 4 : 0)
            bytes.append(0)
            appendVarint(UInt64(bitPattern: sequence &- previous.sequence))
            previous.sequence = sequence
            if let uuid = UUIDForm(identifier) {
                flags |= uuid.isSmall ? 0x20 : 0x10
                uuid.append(to: &bytes)
            } else {
                appendVarint(UInt64(identifier.utf8.count))
                appendBytes(of: identifier, to: &bytes)
            }
            appendVarint(zigzag(snapshotID &- previous.snapshotID))
            previous.snapshotID = snapshotID
            if let groupIdentifier {
                if let last = previous.group, DonationBlock.sameBytes(groupIdentifier, last) {
                    flags |= 0x40
                } else {
                    flags |= 0x80
                    let group = Array(groupIdentifier.utf8)
                    appendVarint(UInt64(group.count))
                    bytes.append(contentsOf: group)
                    previous.group = group
                }
            }
            if let milliseconds = DonationBlock.wholeMilliseconds(date) {
                flags |= 8
                appendVarint(zigzag(milliseconds &- previous.milliseconds))
                previous.milliseconds = milliseconds
            } else {
                withUnsafeBytes(of: date.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            }
            if let types {
                if let last = previous.contentTypes, last == types {
                    bytes.append(1)
                } else {
                    appendVarint(UInt64(types.count) + 2)
                    bytes.append(contentsOf: types)
                    previous.contentTypes = types
                }
            } else {
                bytes.append(0)
            }
            bytes[flagsAt] = flags
        }

        private mutating func appendVarint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
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

    /// What the ranking needs of each donation of a block, in order, without building its strings: its sequence
    /// number, snapshot row, date, direction and whether it was an engaged share. For a fold of an account's
    /// learned weights, which reads every donation and needs none of their identifiers.
    /// - Throws: `StoreError.notAStore` when the bytes are not a block.
    static func forEachEvent(
        in bytes: UnsafeRawBufferPointer,
        _ body: (
            _ sequence: Int64, _ snapshotID: Int64, _ date: Double, _ direction: InteractionDirection, _ engaged: Bool
        )
            -> Void
    ) throws(StoreError) {
        var reader = Reader(bytes: bytes)
        while !reader.isAtEnd {
            guard let fields = reader.fieldsOfNext() else { throw damaged }
            body(
                reader.previous.sequence, reader.previous.snapshotID, fields.date,
                InteractionDirection(storedCode: fields.flags & 3), fields.flags & 4 != 0)
        }
    }

    /// Reads a block's donations one at a time: `export` keeps many blocks open at once, and a block's bytes take
    /// a fifth of its decoded donations' memory.
    struct Cursor {
        private let bytes: [UInt8]
        private var offset = 0
        private var previous = Previous()
        /// The donation `advance()` will return next, if any.
        private(set) var current: StoredDonation?

        /// - Throws: `StoreError.notAStore` when the block's first donation is damaged.
        init(_ bytes: [UInt8]) throws(StoreError) {
            self.bytes = bytes
            try advance()
        }

        /// Moves on to the next donation (`current` is `nil` after the last one).
        /// - Throws: `StoreError.notAStore` when it is damaged.
        mutating func advance() throws(StoreError) {
            let (offset, previous) = (self.offset, self.previous)
            let read: (StoredDonation, Int, Previous)?? = bytes.withUnsafeBytes { raw in
                var reader = Reader(bytes: raw)
                reader.offset = offset
                reader.previous = previous
                if reader.isAtEnd { return .some(nil) }
                guard let donation = reader.donation() else { return nil }
                return (donation, reader.offset, reader.previous)
            }
            guard let read else { throw DonationBlock.damaged }
            current = read?.0
            if let read { (self.offset, self.previous) = (read.1, read.2) }
        }
    }

    /// Whether the block holds a donation with this identifier, compared byte for byte, without decoding the rest.
    /// - Parameter previous: the donation the bytes are coded after, for bytes that continue a block.
    static func contains(identifier: String, in bytes: UnsafeRawBufferPointer, after previous: Previous = Previous())
        throws(StoreError) -> Bool
    {
        // A string has one form: a UUID is never stored as text, so forms are compared first, then bytes.
        let uuid = UUIDForm(identifier)
        let uuidBytes = uuid?.bytes ?? []
        let text = uuid == nil ? Array(identifier.utf8) : []
        var reader = Reader(bytes: bytes)
        reader.previous = previous
        while !reader.isAtEnd {
            guard
                let found = reader.skipDonation(identifier: { form, candidate in
                    if let uuid { return form == (uuid.isSmall ? 2 : 1) && candidate.elementsEqual(uuidBytes) }
                    return form == 0 && candidate.elementsEqual(text)
                })
            else { throw damaged }
            if found { return true }
        }
        return false
    }

    static let damaged = StoreError(.notAStore, "a stored block of donations is damaged; the store needs repair")

    /// `date` as a whole number of milliseconds, when that gives back exactly the same `Double`.
    static func wholeMilliseconds(_ date: Double) -> Int64? {
        let scaled = (date * 1000).rounded()
        guard abs(scaled) < 9.0e15, (Double(Int64(scaled)) / 1000).bitPattern == date.bitPattern else { return nil }
        return Int64(scaled)
    }

    /// A string's UTF-8 bytes, copied at once: `append(contentsOf: string.utf8)` appended them one by one, each
    /// with its check of the array's uniqueness (a tenth of a 10M import's writing thread).
    private static func appendBytes(of string: String, to bytes: inout [UInt8]) {
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes.append(contentsOf: Array(string.utf8)) }
    }

    /// Whether the string's UTF-8 bytes are `bytes`, compared in place.
    static func sameBytes(_ string: String, _ bytes: [UInt8]) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { text in
            text.count == bytes.count && bytes.withUnsafeBufferPointer { text.elementsEqual($0) }
        } ?? string.utf8.elementsEqual(bytes)
    }

    private static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    private static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// An identifier in the canonical text form of a UUID (8-4-4-4-12 hexadecimal digits, all letters capitals or
    /// all small), kept as its 16 bytes.
    struct UUIDForm {
        /// The 16 bytes, first byte in the high bits of `high`.
        var high: UInt64
        var low: UInt64
        var isSmall: Bool

        var bytes: [UInt8] {
            var bytes: [UInt8] = []
            append(to: &bytes)
            return bytes
        }

        func append(to bytes: inout [UInt8]) {
            withUnsafeBytes(of: high.bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: low.bigEndian) { bytes.append(contentsOf: $0) }
        }

        init?(_ identifier: String) {
            // Over the string's bytes in place: walking its `utf8` view character by character was a twentieth of
            // a 10M import's writing thread.
            guard identifier.utf8.count == 36,
                let form = identifier.utf8.withContiguousStorageIfAvailable({ UUIDForm(text: $0) })
                    ?? UUIDForm(text: Array(identifier.utf8))
            else { return nil }
            self = form
        }

        private init?(text: UnsafeBufferPointer<UInt8>) {
            var words: (UInt64, UInt64) = (0, 0)
            var digits = 0
            var capitals = false
            var small = false
            for index in 0..<36 {
                let character = text[index]
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard character == UInt8(ascii: "-") else { return nil }
                    continue
                }
                let digit: UInt64
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(character - UInt8(ascii: "0"))
                case UInt8(ascii: "A")...UInt8(ascii: "F"):
                    digit = UInt64(character - UInt8(ascii: "A") + 10)
                    capitals = true
                case UInt8(ascii: "a")...UInt8(ascii: "f"):
                    digit = UInt64(character - UInt8(ascii: "a") + 10)
                    small = true
                default: return nil
                }
                if digits < 16 { words.0 = words.0 << 4 | digit } else { words.1 = words.1 << 4 | digit }
                digits += 1
            }
            guard !(capitals && small) else { return nil }
            (high, low, isSmall) = (words.0, words.1, small)
        }

        private init?(text: [UInt8]) {
            guard let form = text.withUnsafeBufferPointer({ UUIDForm(text: $0) }) else { return nil }
            self = form
        }

        /// The text form of 16 bytes.
        static func text(_ bytes: UnsafeRawBufferPointer, small: Bool) -> String {
            let digits = Array((small ? "0123456789abcdef" : "0123456789ABCDEF").utf8)
            var text: [UInt8] = []
            text.reserveCapacity(36)
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 15)])
            }
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// Reads a block forward; every read fails (`nil` or `false`) rather than read past the end.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var previous = Previous()

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

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

        /// The next `count` bytes, in place.
        mutating func take(_ count: UInt64) -> UnsafeRawBufferPointer? {
            guard count <= UInt64(bytes.count - offset) else { return nil }
            defer { offset += Int(count) }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(count)])
        }

        /// Reads one donation's fields, keeping `previous` up to date, and hands its identifier's form and bytes
        /// to `identifier`. - Returns: `nil` when damaged, else what `identifier` returned.
        mutating func skipDonation(
            identifier matches: (_ form: UInt8, _ bytes: UnsafeRawBufferPointer) -> Bool = { _, _ in false }
        ) -> Bool? {
            guard let fields = fields() else { return nil }
            return matches(fields.identifierForm, fields.identifier)
        }

        mutating func skipDonation() -> Bool { fields() != nil }

        /// The next donation's flags and date (its sequence number and snapshot are then in `previous`).
        mutating func fieldsOfNext() -> (flags: UInt8, date: Double)? {
            fields().map { ($0.flags, $0.date) }
        }

        mutating func donation() -> StoredDonation? {
            guard let fields = fields() else { return nil }
            let identifier =
                fields.identifierForm == 0
                ? String(decoding: fields.identifier, as: UTF8.self)
                : UUIDForm.text(fields.identifier, small: fields.identifierForm == 2)
            return StoredDonation(
                sequence: previous.sequence, identifier: identifier, snapshotID: previous.snapshotID,
                groupIdentifier: fields.hasGroup ? previous.group.map { String(decoding: $0, as: UTF8.self) } : nil,
                date: fields.date, direction: InteractionDirection(storedCode: fields.flags & 3),
                engaged: fields.flags & 4 != 0,
                contentTypes: fields.hasContentTypes
                    ? previous.contentTypes.map { String(decoding: $0, as: UTF8.self) } : nil)
        }

        private struct Fields {
            var flags: UInt8
            var identifierForm: UInt8
            var identifier: UnsafeRawBufferPointer
            var hasGroup: Bool
            var date: Double
            var hasContentTypes: Bool
        }

        private mutating func fields() -> Fields? {
            guard let flagBytes = take(1), let sequenceDelta = varint() else { return nil }
            let flags = flagBytes[0]
            previous.sequence &+= Int64(bitPattern: sequenceDelta)
            let form = (flags >> 4) & 3
            let identifier: UnsafeRawBufferPointer
            switch form {
            case 0:
                guard let length = varint(), let text = take(length) else { return nil }
                identifier = text
            case 1, 2:
                guard let uuid = take(16) else { return nil }
                identifier = uuid
            default: return nil
            }
            guard let snapshotDelta = varint() else { return nil }
            previous.snapshotID &+= DonationBlock.unzigzag(snapshotDelta)
            switch flags >> 6 {
            case 0: break
            case 1: guard previous.group != nil else { return nil }
            case 2:
                guard let length = varint(), let group = take(length) else { return nil }
                previous.group = Array(group)
            default: return nil
            }
            let date: Double
            if flags & 8 != 0 {
                guard let delta = varint() else { return nil }
                previous.milliseconds &+= DonationBlock.unzigzag(delta)
                date = Double(previous.milliseconds) / 1000
            } else {
                guard let raw = take(8) else { return nil }
                date = Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)))
            }
            guard let types = varint() else { return nil }
            switch types {
            case 0: break
            case 1: guard previous.contentTypes != nil else { return nil }
            default:
                guard let text = take(types - 2) else { return nil }
                previous.contentTypes = Array(text)
            }
            return Fields(
                flags: flags, identifierForm: form, identifier: identifier, hasGroup: flags >> 6 != 0, date: date,
                hasContentTypes: types != 0)
        }
    }
}
