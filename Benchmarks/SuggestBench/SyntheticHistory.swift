import SuggestCore

/// A seeded synthetic donation history: who talks to whom, how often and when.
///
/// - Popularity: conversations are drawn by a Zipf law (`zipfExponent`, 1 by default) over a fixed random
///   permutation of the conversations, so popular ones are spread over the identifier space.
/// - Drift: a share (`hotShare`) of the sessions go to a small "hot" set of 16 conversations that rotates every
///   few days, so what is busy this week differs from what matters over months (the two-speed blend's case).
/// - Bursts: a session is a run of consecutive messages to one conversation (geometric length, mean
///   `meanBurst`), seconds apart, in both directions.
/// - Coverage: every one of the `conversations` gets at least one donation (selection sampling spreads those first
///   donations over the whole span), so the count of conversations is exact.
/// - Time: donation `k` of `n` happens near `end - span + span·k/n`: the history ends at `end`, in order.
///
/// The stream is a pure function of the parameters and the seed.
struct SyntheticHistory {
    struct Parameters {
        var donations = 1_000_000
        var conversations = 100_000
        var seed: UInt64 = 1
        var accounts = 1
        var end = Timestamp(seconds: 1_795_996_800)  // 2026-11-30T00:00:00Z
        var spanDays = 365.0
        var zipfExponent = 1.0
        var meanBurst = 3.0
        var hotShare = 0.2
        var groupShare = 0.15
        var contentShare = 0.08
        var outgoingShare = 0.5
    }

    /// One generated donation, before it becomes JSON or an `Interaction`.
    struct Donation {
        var index: Int
        var conversation: Int32
        /// Unix seconds, whole.
        var date: Int64
        var direction: InteractionDirection
        var engaged: Bool
        /// An index into `SyntheticHistory.contentTypes`, or -1 for none.
        var contentType: Int8
        /// Who sent an incoming message: an index into the conversation's members.
        var senderMember: Int8
    }

    /// What was shared, weighted as phones share it: mostly photos, then links, videos and documents.
    static let contentTypes: [StaticString] = [
        "public.jpeg", "public.jpeg", "public.jpeg", "public.jpeg", "public.heic", "public.png", "public.url",
        "public.url", "public.mpeg-4", "com.adobe.pdf",
    ]

    let parameters: Parameters
    let zipf: ZipfSampler
    private let multiplier: UInt64
    private let offset: UInt64

    init(_ parameters: Parameters) {
        precondition(parameters.conversations > 0 && parameters.donations >= parameters.conversations)
        self.parameters = parameters
        zipf = ZipfSampler(count: parameters.conversations, exponent: parameters.zipfExponent)
        // rank -> conversation: an affine bijection of 0..<C, with a multiplier coprime to C.
        let count = UInt64(parameters.conversations)
        var multiplier = (SeededGenerator.hash(parameters.seed, 7) % count) | 1
        while SyntheticHistory.gcd(multiplier, count) != 1 { multiplier += 2 }
        self.multiplier = multiplier % count == 0 ? 1 : multiplier
        offset = SeededGenerator.hash(parameters.seed, 11) % count
    }

    private static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 { b == 0 ? a : gcd(b, a % b) }

    /// The conversation of popularity rank `rank` (0 = most popular).
    @inline(__always)
    func conversation(ofRank rank: Int) -> Int32 {
        let count = UInt64(parameters.conversations)
        return Int32(truncatingIfNeeded: (UInt64(rank).multipliedFullWidth(by: multiplier).low % count &+ offset) % count)
    }

    // MARK: Who is in each conversation (pure functions of its number)

    func isGroup(_ conversation: Int32) -> Bool {
        Double(SeededGenerator.hash(parameters.seed, UInt64(conversation), 1) % 10_000) < parameters.groupShare * 10_000
    }

    /// The people (by number) a conversation is with: one for a direct conversation, 2 to 7 for a group.
    func members(_ conversation: Int32) -> [Int32] {
        guard isGroup(conversation) else { return [conversation] }
        let count = 2 + Int(SeededGenerator.hash(parameters.seed, UInt64(conversation), 2) % 6)
        return (0..<count).map { member in
            Int32(SeededGenerator.hash(parameters.seed, UInt64(conversation), 3 + UInt64(member)) % UInt64(parameters.conversations))
        }
    }

    func memberCount(_ conversation: Int32) -> Int {
        isGroup(conversation) ? 2 + Int(SeededGenerator.hash(parameters.seed, UInt64(conversation), 2) % 6) : 1
    }

    func account(_ conversation: Int32) -> String {
        parameters.accounts <= 1 ? Interaction.defaultAccount : "account-\(Int(conversation) % parameters.accounts)"
    }

    static func conversationIdentifier(_ conversation: Int32) -> String { "c-\(conversation)" }
    static func personIdentifier(_ person: Int32) -> String { "p-\(person)" }

    static let firstNames: [StaticString] = [
        "Juan", "Amara", "Li", "Sofia", "Noah", "Aiko", "Omar", "Freya", "Mateo", "Zara", "Ivan", "Chloe", "Ravi",
        "Elena", "Kwame", "Nora",
    ]
    static let lastNames: [StaticString] = [
        "Chavez", "Okafor", "Wei", "Rossi", "Keller", "Tanaka", "Haddad", "Berg", "Silva", "Khan", "Petrov", "Martin",
        "Iyer", "Novak", "Mensah", "Dubois",
    ]
    static let groupWords: [StaticString] = [
        "Climbing crew", "Book club", "Family", "Flatmates", "Project team", "Choir", "Football", "Neighbours",
    ]

    /// A person's first and last name.
    @inline(__always)
    func name(_ person: Int32) -> (first: StaticString, last: StaticString) {
        let bits = SeededGenerator.hash(parameters.seed, UInt64(person), 101)
        return (SyntheticHistory.firstNames[Int(bits & 15)], SyntheticHistory.lastNames[Int((bits >> 4) & 15)])
    }

    func displayName(_ person: Int32) -> String {
        let (first, last) = name(person)
        return "\(first) \(last)"
    }

    /// The words of a group's name; the name is the words and the conversation's number.
    @inline(__always)
    func groupWords(_ conversation: Int32) -> StaticString {
        SyntheticHistory.groupWords[Int(SeededGenerator.hash(parameters.seed, UInt64(conversation), 102) & 7)]
    }

    func groupName(_ conversation: Int32) -> String { "\(groupWords(conversation)) \(conversation)" }

    /// `sms` for a tenth of the conversations, `chat.example` for the rest.
    @inline(__always)
    func serviceName(_ conversation: Int32) -> StaticString {
        SeededGenerator.hash(parameters.seed, UInt64(conversation), 103) % 10 == 0 ? "sms" : "chat.example"
    }

    /// The donation as the model type, for in-process benchmarks (`importDonations`, `apply(_:)`).
    func interaction(_ donation: Donation, identifier: String? = nil) -> Interaction {
        let conversation = donation.conversation
        let members = self.members(conversation)
        let people = members.map { person in
            Person(
                customIdentifier: SyntheticHistory.personIdentifier(person), displayName: displayName(person),
                personHandle: person % 2 == 0
                    ? .init(value: "p\(person)@example.com", type: .emailAddress)
                    : .init(value: "+1555\(person)", type: .phoneNumber))
        }
        let group = members.count > 1 || isGroup(conversation)
        let sender: Person? =
            donation.direction == .incoming
            ? Person(
                customIdentifier: people[Int(donation.senderMember) % people.count].customIdentifier,
                displayName: people[Int(donation.senderMember) % people.count].displayName)
            : nil
        let intent = SendMessageIntent(
            conversationIdentifier: SyntheticHistory.conversationIdentifier(conversation),
            speakableGroupName: group ? groupName(conversation) : nil, serviceName: "\(serviceName(conversation))",
            sender: sender, recipients: people, image: group ? "avatars/c-\(conversation).png" : nil,
            contentTypes: donation.contentType >= 0 ? ["\(SyntheticHistory.contentTypes[Int(donation.contentType)])"] : [])
        return Interaction(
            account: account(conversation), identifier: identifier,
            groupIdentifier: SyntheticHistory.conversationIdentifier(conversation),
            date: Timestamp(seconds: Double(donation.date)), direction: donation.direction, intent: intent,
            isEngagedSuggestion: donation.engaged)
    }

    func makeIterator() -> Stream { Stream(history: self) }

    /// The donations in order; `next()` is allocation-free.
    struct Stream {
        let history: SyntheticHistory
        private(set) var random: SeededGenerator
        private var index = 0
        private var introduced = 0
        private var sessionConversation: Int32 = 0
        private var sessionRemaining = 0
        private var sessionStart: Double = 0
        private var sessionStep: Double = 0
        private var sessionPosition = 0
        private var hot: [Int32]
        private let hotPeriod: Int
        private let start: Double
        private let span: Double

        init(history: SyntheticHistory) {
            self.history = history
            let parameters = history.parameters
            random = SeededGenerator(seed: parameters.seed)
            hot = (0..<16).map { SeededGenerator.hash(parameters.seed, 1_000 + $0) }.map {
                Int32(truncatingIfNeeded: $0 % UInt64(parameters.conversations))
            }
            span = parameters.spanDays * 86_400
            start = parameters.end.seconds - span
            // One hot conversation is replaced every 3 days of history.
            hotPeriod = max(1, Int(Double(parameters.donations) * 3 * 86_400 / max(span, 1)))
        }

        /// The random stream, for callers that need more seeded randomness (identifiers) in step with it.
        mutating func withRandom<T>(_ body: (inout SeededGenerator) -> T) -> T { body(&random) }

        @inline(__always)
        mutating func next() -> Donation? {
            let parameters = history.parameters
            let total = parameters.donations
            guard index < total else { return nil }
            if index % hotPeriod == 0 && index > 0 {
                hot[(index / hotPeriod) % hot.count] = Int32(random.below(parameters.conversations))
            }
            let remaining = total - index
            let toIntroduce = parameters.conversations - introduced
            // Selection sampling: exactly `conversations` first donations, spread over the whole history; a
            // session never eats the room the remaining introductions need.
            if random.below(remaining) < toIntroduce {
                sessionConversation = Int32(introduced)
                introduced += 1
                sessionRemaining = 1
                beginSession()
            } else if sessionRemaining == 0 {
                if random.unit() < parameters.hotShare {
                    sessionConversation = hot[random.below(hot.count)]
                } else {
                    sessionConversation = history.conversation(ofRank: history.zipf.sample(&random))
                }
                // Geometric length with the given mean.
                var length = 1
                let continueChance = 1 - 1 / max(parameters.meanBurst, 1)
                while random.unit() < continueChance && length < 64 { length += 1 }
                sessionRemaining = min(length, max(1, remaining - toIntroduce))
                beginSession()
            }
            let date = sessionStart + sessionStep * Double(sessionPosition)
            sessionPosition += 1
            sessionRemaining -= 1
            let outgoing = random.unit() < parameters.outgoingShare
            let draw = random.next()
            let contentType: Int8 =
                Double(draw & 0xFFFF) < parameters.contentShare * 65_536
                ? Int8((draw >> 16) % UInt64(SyntheticHistory.contentTypes.count)) : -1
            let donation = Donation(
                index: index, conversation: sessionConversation, date: Int64(date.rounded(.down)),
                direction: outgoing ? .outgoing : .incoming, engaged: outgoing && (draw >> 24) & 127 == 0,
                contentType: contentType, senderMember: Int8((draw >> 32) % 8))
            index += 1
            return donation
        }

        private mutating func beginSession() {
            let parameters = history.parameters
            let perDonation = span / Double(parameters.donations)
            sessionStart = start + span * Double(index) / Double(parameters.donations)
            // Messages of one session are seconds to a minute apart, and never overtake the next session.
            sessionStep = min(60, perDonation) * (0.5 + 0.5 * random.unit())
            sessionPosition = 0
        }
    }
}

extension SyntheticHistory {
    /// Every donation as the ranker sees it, in order, beside its conversation's number: what the in-memory
    /// benchmarks replay, generated before the clock starts.
    func rankerEvents() -> (events: [ConversationState.Event], conversations: [Int32]) {
        var events: [ConversationState.Event] = []
        var conversations: [Int32] = []
        events.reserveCapacity(parameters.donations)
        conversations.reserveCapacity(parameters.donations)
        var stream = makeIterator()
        while let donation = stream.next() {
            events.append(
                ConversationState.Event(
                    date: Timestamp(seconds: Double(donation.date)), direction: donation.direction,
                    isEngagedSuggestion: donation.engaged, isGroup: isGroup(donation.conversation)))
            conversations.append(donation.conversation)
        }
        return (events, conversations)
    }
}
