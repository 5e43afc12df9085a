import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestStore

/// A preparer that reuses recent snapshot bodies gives every donation the body it would have without reuse.
@Suite struct DonationPreparerTests {
    @Test func reusedBodiesEqualFreshOnes() throws {
        let temporary = try TemporaryStore()
        let preparer = temporary.store.makePreparer()
        var random = SeededRandom(seed: 5)
        for index in 0..<5_000 {
            // Few conversations, several senders and names each, content types that must not matter to the body.
            let conversation = "c-\(Int.random(in: 0..<20, using: &random))"
            let sender = "p-\(Int.random(in: 0..<6, using: &random))"
            let interaction = Interaction(
                identifier: "d-\(index)", date: Timestamp(seconds: Double(index)),
                direction: Bool.random(using: &random) ? .incoming : .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: conversation,
                    // Two spellings of one name, equal to `==`, must keep their own bytes.
                    speakableGroupName: ["Caf\u{E9}", "Cafe\u{301}", "Group", nil].randomElement(using: &random)!,
                    recipients: [Person(customIdentifier: sender, displayName: "Person \(sender)")],
                    contentTypes: Bool.random(using: &random) ? [] : ["public.jpeg"]))
            let prepared = preparer.prepare(interaction)
            #expect(prepared.snapshotBody == PreparedDonation.snapshotBody(of: interaction.intent))
            #expect(prepared.conversationKey == StableHash.key("default", conversation))
        }
    }
}
