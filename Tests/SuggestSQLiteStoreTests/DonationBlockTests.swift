import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestSQLiteStore

/// A block gives back every field of every donation, bit for bit, whatever their mix of forms (UUIDs in capitals,
/// small letters or neither, repeated and new groups and content types, dates in whole milliseconds or not); it
/// can be continued where it stopped; and damaged bytes are refused, never read past.
@Suite struct DonationBlockTests {
    static func randomDonations(_ count: Int, using random: inout SeededRandom) -> [StoredDonation] {
        let groups = ["g", "é", "e\u{301}", "a much longer group identifier 🙂", ""]
        let types = ["public.jpeg", "public.url\npublic.plain-text", "", "com.example.x"]
        var sequence = Int64.random(in: 0...1_000_000, using: &random)
        var date = Double.random(in: -4e9...4e9, using: &random).rounded()
        return (0..<count).map { _ in
            sequence += Int64.random(in: 1...5, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: date += Double(Int.random(in: 0...600, using: &random))
            case 1: date -= Double(Int.random(in: 0...86_400, using: &random)) + 0.125
            case 2: date = Double.random(in: -1e10...1e10, using: &random)  // rarely a whole number of milliseconds
            default: date += 0.001 * Double(Int.random(in: 0...999, using: &random))
            }
            var uuid = (0..<16).map { _ in String(UInt8.random(in: 0...255, using: &random), radix: 16).leftPadded }
                .joined()
            for dash in [8, 13, 18, 23] { uuid.insert("-", at: uuid.index(uuid.startIndex, offsetBy: dash)) }
            let identifier: String
            switch Int.random(in: 0..<6, using: &random) {
            case 0: identifier = uuid.uppercased()
            case 1: identifier = uuid
            case 2: identifier = String(uuid.prefix(10)).uppercased() + uuid.dropFirst(10)  // mixed: kept as text
            case 3: identifier = "0123" + String(uuid.dropFirst(4).map { $0.isLetter ? "7" : $0 })  // digits only
            case 4: identifier = ""
            default:
                identifier =
                    "message-\(sequence)-\(String(repeating: "x", count: Int.random(in: 0...300, using: &random)))"
            }
            return StoredDonation(
                sequence: sequence, identifier: identifier,
                snapshotID: Int64.random(in: 1...20, using: &random) * (Bool.random(using: &random) ? 1 : 1_000_000),
                groupIdentifier: Bool.random(using: &random) ? nil : groups.randomElement(using: &random),
                date: date, direction: [.incoming, .outgoing, .unspecified].randomElement(using: &random)!,
                engaged: Bool.random(using: &random),
                contentTypes: Bool.random(using: &random) ? nil : types.randomElement(using: &random))
        }
    }

    static func encode(_ donations: [StoredDonation]) -> [UInt8] {
        var encoder = DonationBlock.Encoder()
        for donation in donations { encoder.append(donation) }
        return encoder.bytes
    }

    @Test func everyFieldComesBackBitForBit() throws {
        var random = SeededRandom(seed: 21)
        for _ in 0..<300 {
            let donations = Self.randomDonations(Int.random(in: 1...40, using: &random), using: &random)
            let bytes = Self.encode(donations)
            let decoded = try bytes.withUnsafeBytes { try DonationBlock.decode($0) }
            #expect(decoded.map(\.date.bitPattern) == donations.map(\.date.bitPattern))
            #expect(decoded.map(\.identifier.utf8).map(Array.init) == donations.map(\.identifier.utf8).map(Array.init))
            #expect(
                decoded.map(\.groupIdentifier?.utf8).map { $0.map(Array.init) }
                    == donations.map(\.groupIdentifier?.utf8).map { $0.map(Array.init) })
            #expect(decoded == donations)
            for donation in donations {
                #expect(
                    try bytes.withUnsafeBytes { try DonationBlock.contains(identifier: donation.identifier, in: $0) })
            }
            // The other forms of an identifier are other identifiers.
            for other in ["missing", donations[0].identifier.uppercased() + "x", donations[0].identifier + " "] {
                let expected = donations.contains { $0.identifier == other }
                #expect(try bytes.withUnsafeBytes { try DonationBlock.contains(identifier: other, in: $0) } == expected)
            }
        }
    }

    /// A UUID's other letter case, and a canonically equivalent spelling of a group, are not the same bytes.
    @Test func formsThatLookAlikeStayApart() throws {
        let upper = "DDFDB48A-B9ED-4A21-8D3C-DB8C3AA5B1D0"
        let donations = [upper, upper.lowercased()].enumerated().map { index, identifier in
            StoredDonation(
                sequence: Int64(index + 1), identifier: identifier, snapshotID: 1,
                groupIdentifier: index == 0 ? "é" : "e\u{301}", date: 0, direction: .outgoing, engaged: false,
                contentTypes: nil)
        }
        let bytes = Self.encode(donations)
        let decoded = try bytes.withUnsafeBytes { try DonationBlock.decode($0) }
        #expect(decoded.map(\.identifier) == [upper, upper.lowercased()])
        #expect(decoded.map { Array($0.groupIdentifier!.utf8) } == [Array("é".utf8), Array("e\u{301}".utf8)])
        // About 25 bytes each where a row and its index entries took about 160.
        #expect(bytes.count < 2 * 30)
    }

    @Test func aContinuedBlockEqualsOneWrittenAtOnce() throws {
        var random = SeededRandom(seed: 22)
        for _ in 0..<100 {
            let donations = Self.randomDonations(Int.random(in: 2...30, using: &random), using: &random)
            let split = Int.random(in: 1..<donations.count, using: &random)
            let stored = Self.encode(Array(donations[..<split]))
            var encoder = try stored.withUnsafeBytes { try DonationBlock.Encoder(following: $0) }
            let rest = Int.random(in: split...donations.count, using: &random)
            for donation in donations[split..<rest] { encoder.append(donation) }
            // Written in two steps, as a writer that writes its block before the transaction ends does.
            let written = encoder.bytes
            encoder.removeWritten()
            for donation in donations[rest...] { encoder.append(donation) }
            #expect(stored + written + encoder.bytes == Self.encode(donations))
            // What it holds is read from where it began (a group or content types "as the donation before").
            for donation in donations[rest...] { #expect(try encoder.contains(identifier: donation.identifier)) }
        }
    }

    @Test func damagedBytesAreRefused() throws {
        var random = SeededRandom(seed: 23)
        for _ in 0..<200 {
            let donations = Self.randomDonations(Int.random(in: 1...10, using: &random), using: &random)
            let bytes = Self.encode(donations)
            // Every cut that ends inside a donation is refused; one that ends between two gives the ones before.
            let cut = Int.random(in: 0..<bytes.count, using: &random)
            let prefix = Array(bytes[..<cut])
            let decoded = try? prefix.withUnsafeBytes({ try DonationBlock.decode($0) })
            if let decoded {
                #expect(decoded == Array(donations.prefix(decoded.count)))
                #expect(Self.encode(decoded) == prefix)
            }
            let continued = try? prefix.withUnsafeBytes { try DonationBlock.Encoder(following: $0) }
            #expect(continued == nil ? decoded == nil : decoded != nil)
            // A byte of flags with no identifier form (bits 4–5 both set) is refused wherever it starts a donation.
            #expect(throws: StoreError.self) {
                try (bytes + [0x30, 1]).withUnsafeBytes { try DonationBlock.Encoder(following: $0) }
            }
            // Random bytes: refused or decoded, never a crash or a read past the end.
            let noise = (0..<Int.random(in: 1...64, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? noise.withUnsafeBytes { try DonationBlock.decode($0) }
            _ = try? noise.withUnsafeBytes { try DonationBlock.contains(identifier: "x", in: $0) }
        }
    }
}

extension String {
    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}
