import SuggestCore
import SuggestTestSupport
import Testing

/// The forms both stores keep of a donation: their bytes are in every store already written, so they must not move.
@Suite struct StoredFormsTests {
    @Test func directionCodesAreTheStoredOnes() {
        #expect(InteractionDirection.allCases.map(\.storedCode) == [0, 1, 2])
        for direction in InteractionDirection.allCases {
            #expect(InteractionDirection(storedCode: direction.storedCode) == direction)
        }
        #expect(InteractionDirection(storedCode: 3) == .unspecified)
        #expect(InteractionDirection(storedCode: 255) == .unspecified)
    }

    @Test func aSnapshotLeavesOutTheContentTypes() {
        let intent = SendMessageIntent(
            conversationIdentifier: "c-1", speakableGroupName: "Team", serviceName: "sms",
            recipients: [Person(customIdentifier: "p-1", displayName: "Ann")], contentTypes: ["public.jpeg"])
        var untyped = intent
        untyped.contentTypes = []
        #expect(intent.snapshotBody == untyped.snapshotBody)
        // The bytes themselves, members in their order: stores hold them, and find snapshots by their hash.
        #expect(
            String(decoding: intent.snapshotBody, as: UTF8.self)
                == #"{"conversationIdentifier":"c-1","speakableGroupName":"Team","serviceName":"sms","#
                + #""recipients":[{"customIdentifier":"p-1","displayName":"Ann"}]}"#)
    }

    @Test func generatedIdentifiersHaveTheUUIDForm() {
        var random = SeededRandom(seed: 7)
        var seen = Set<String>()
        for _ in 0..<200 {
            let identifier = Interaction.generatedIdentifier(using: &random)
            let bytes = Array(identifier.utf8)
            #expect(bytes.count == 36)
            for (index, byte) in bytes.enumerated() {
                if [8, 13, 18, 23].contains(index) {
                    #expect(byte == UInt8(ascii: "-"))
                } else {
                    #expect((0x30...0x39).contains(byte) || (0x41...0x46).contains(byte), "\(identifier)")
                }
            }
            seen.insert(identifier)
        }
        #expect(seen.count == 200)
        // Zeros lead a short number: a generator's small values keep every digit.
        var zeros = ConstantRandom(value: 0x1F)
        #expect(Interaction.generatedIdentifier(using: &zeros) == "00000000-0000-001F-0000-00000000001F")
    }
}

/// A generator that gives one value every time.
private struct ConstantRandom: RandomNumberGenerator {
    let value: UInt64
    mutating func next() -> UInt64 { value }
}
