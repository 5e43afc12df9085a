import SuggestCore
import Testing

/// Whether a donation makes its conversation a group, and whether it says what the conversation looks like: the
/// user's own entry, a person given twice and blank fields name nobody (a probe found a conversation with one
/// person weighed and labelled as a group, and a group's name, picture and people erased by a name of spaces).
@Suite struct ConversationKindTests {
    let ann = Person(customIdentifier: "u-1", displayName: "Ann")
    let bob = Person(customIdentifier: "u-2", displayName: "Bob")
    let me = Person(customIdentifier: "me", displayName: "Me", isMe: true)

    func intent(name: String? = nil, _ recipients: [Person], image: String? = nil) -> SendMessageIntent {
        SendMessageIntent(conversationIdentifier: "c", speakableGroupName: name, recipients: recipients, image: image)
    }

    @Test func aGroupHasANameOrMoreThanOnePersonOtherThanTheUser() {
        #expect(intent([ann, bob]).isGroup)
        #expect(intent(name: "Crew", [ann]).isGroup)
        #expect(intent([ann, Person(customIdentifier: "u-1", displayName: "Annie")]).isGroup == false)
        #expect(intent([me, ann]).isGroup == false)
        #expect(intent([ann, ann]).isGroup == false)
        #expect(intent([ann, Person()]).isGroup == false)
        #expect(intent([ann, Person(displayName: "   ")]).isGroup == false)
        #expect(intent(name: " \t", [ann]).isGroup == false)
        #expect(intent([me]).isGroup == false)
        // Two people told apart by different fields are two; so are identifiers that differ in their bytes alone
        // (`café` composed and decomposed), as everywhere else.
        #expect(intent([Person(displayName: "Ann"), Person(personHandle: .init(value: "ann@example.com"))]).isGroup)
        #expect(intent([Person(customIdentifier: "caf\u{E9}"), Person(customIdentifier: "cafe\u{301}")]).isGroup)
    }

    /// A context's people are looked up among the recipients and the sender, but for the user's own entry, by
    /// identifiers that are not blank.
    @Test func theParticipantsAreThePeopleOtherThanTheUser() {
        var withSender = intent([me, ann])
        withSender.sender = bob
        #expect(withSender.participants == [ann, bob])
        withSender.sender = me
        #expect(withSender.participants == [ann])
        #expect(Person(customIdentifier: "  ", displayName: "Zed", personHandle: .init(value: "\t")).matchKeys.isEmpty)
        #expect(Person(customIdentifier: " z ").matchKeys == [" z "])
    }

    @Test func blankFieldsDoNotDescribeAConversation() {
        #expect(intent(name: "  ", []).describesConversation == false)
        #expect(intent([], image: " ").describesConversation == false)
        #expect(intent([Person(displayName: " ", image: "\n")]).describesConversation == false)
        #expect(intent([me]).describesConversation == false)
        #expect(intent([ann]).describesConversation)
        #expect(intent([], image: "c.png").describesConversation)
    }

    /// A conversation with the user and one person ranks, and is shown, as one with that person alone.
    @Test func theUsersOwnEntryDoesNotMakeAGroup() throws {
        let store = InMemoryDonationStore()
        _ = try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: Timestamp(seconds: 0))
        let start = Timestamp(seconds: 1_700_000_000)
        for step in 0..<10 {
            for (conversation, recipients) in [("a", [ann]), ("b", [me, bob, bob])] {
                _ = try store.record(
                    Interaction(
                        account: "x", date: start.adding(Double(step) * 3_600), direction: .outgoing,
                        intent: SendMessageIntent(conversationIdentifier: conversation, recipients: recipients)),
                    now: start.adding(100_000))
            }
        }
        let listed = try store.suggestions(account: "x", context: RankingContext(at: start.adding(100_000)))
        let a = try #require(listed.suggestions.first { $0.conversationIdentifier == "a" })
        let b = try #require(listed.suggestions.first { $0.conversationIdentifier == "b" })
        #expect(!a.isGroup && !b.isGroup)
        #expect(a.score == b.score)
        #expect(b.title == "Bob" && b.people.map(\.displayName) == ["Bob"])
    }

    @Test func aBlankGroupNameIsNoTitle() {
        let suggestion = Suggestion(
            rank: 1, conversationIdentifier: "c", speakableGroupName: "  ", recipients: [me, ann], image: nil,
            conversationImage: nil, serviceName: nil, isGroup: false, lastDate: Timestamp(seconds: 0), score: 1, explanation: nil)
        #expect(suggestion.title == "Ann" && !suggestion.hasGroupName)
        let nobody = Suggestion(
            rank: 1, conversationIdentifier: "c-9", speakableGroupName: nil, recipients: [Person(displayName: " ")],
            image: nil, conversationImage: nil, serviceName: nil, isGroup: false, lastDate: Timestamp(seconds: 0),
            score: 1, explanation: nil)
        #expect(nobody.title == "c-9")
    }
}
