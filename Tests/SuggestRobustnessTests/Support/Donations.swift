import SuggestCore
import SuggestTestSupport

#if canImport(Glibc)
    import Glibc
#endif


/// Seeded histories of donations with everything a real one has: groups and one-to-one chats, both directions,
/// renames, several recipients, content types, group identifiers and engaged suggestions.
enum Donations {
    /// A whole second a few days before the test runs: recent enough for the default retention (90 days kept,
    /// 30 days before a conversation goes idle), whole so that export's RFC 3339 text gives back the same bits.
    static let start: Double = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec - 3 * 86_400)
    }()

    /// The moment rankings are compared at: an hour after the test began, so after every donation, the generated
    /// ones and those dated "now" by the commands. (Ranking "as of" a moment before a donation makes scores grow
    /// without bound: docs/robustness.md, A.)
    static var at: Timestamp { Timestamp(seconds: start + 3 * 86_400 + 3_600) }

    /// `count` donations with identifiers `PREFIX-0`, `PREFIX-1`, … over `conversations` conversations.
    static func make(
        count: Int, prefix: String, conversations: Int, seed: UInt64, account: String = "default",
        conversationPrefix: String = "c"
    ) -> [Interaction] {
        var random = SeededRandom(seed: seed)
        let directions: [InteractionDirection] = [.outgoing, .outgoing, .incoming, .unspecified]
        let types = [[], [], ["public.jpeg"], ["public.url"], ["public.movie", "public.png"]]
        return (0..<count).map { index in
            let conversation = Int(random.next() % UInt64(max(conversations, 1)))
            let isGroup = conversation % 3 == 0
            let people = (0..<(isGroup ? 3 : 1)).map { offset in
                let person = (conversation + offset * 7) % 40
                return Person(
                    customIdentifier: "p-\(person)", displayName: "Person \(person)",
                    personHandle: .init(value: "p\(person)@example.com", type: .emailAddress))
            }
            // A group renamed now and then: a new snapshot of its metadata.
            let version = isGroup ? random.next() % 4 == 0 ? 1 : 0 : 0
            let intent = SendMessageIntent(
                conversationIdentifier: "\(conversationPrefix)-\(conversation)",
                speakableGroupName: isGroup ? "Group \(conversation) v\(version)" : nil,
                serviceName: conversation % 5 == 0 ? "sms" : "chat.example", recipients: people,
                image: isGroup ? "avatars/g\(conversation).png" : nil,
                contentTypes: types[Int(random.next() % UInt64(types.count))])
            return Interaction(
                account: account, identifier: "\(prefix)-\(index)",
                groupIdentifier: random.next() % 4 == 0 ? "g-\(conversation % 6)" : nil,
                date: Timestamp(seconds: start + Double(index * 7 + Int(random.next() % 5))),
                direction: directions[Int(random.next() % UInt64(directions.count))], intent: intent,
                isEngagedSuggestion: random.next() % 10 == 0)
        }
    }

    /// The donations as JSON Lines.
    static func lines(_ donations: [Interaction]) -> [String] { donations.map(\.jsonLine) }

    static func bytes(_ donations: [Interaction]) -> [UInt8] {
        Array((donations.map(\.jsonLine).joined(separator: "\n") + "\n").utf8)
    }
}
