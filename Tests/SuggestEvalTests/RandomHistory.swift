import SuggestCore
import SuggestTestSupport

/// Small random donation histories with many ties: few conversations, dates on a coarse grid that often repeat,
/// twin donations (the same date and direction to two conversations), some dates out of order, groups, engaged
/// suggestions, repeated and missing identifiers.
enum RandomHistory {
    static let conversationNames = ["a", "b", "B", "é", "a1", "ab", "Z", "z0", "gx", "gü", "e\u{301}", "10", "9"]
    /// Steps between dates: short enough that a history spans a few hundred of the shortest half-lives at most,
    /// so the reference's plain sums do not underflow to 0.
    static let steps: [Double] = [0, 0, 0, 60, 600, 3_600, 3_600, 6 * 3_600, 86_400, 2 * 86_400]

    static func make(seed: UInt64, count: Int) -> [Interaction] {
        var random = SeededRandom(seed: seed)
        let accountCount = Int.random(in: 1...3, using: &random)
        let conversationCount = Int.random(in: 2...conversationNames.count, using: &random)
        let names = Array(conversationNames.shuffled(using: &random).prefix(conversationCount))
        var date = 1_000_000_000.0
        var history: [Interaction] = []
        var identifiers: [String: [String]] = [:]
        while history.count < count {
            date += steps.randomElement(using: &random) ?? 0
            let account = "acct\(Int.random(in: 0..<accountCount, using: &random))"
            var when = date
            if Int.random(in: 0..<20, using: &random) == 0 { when -= Double(Int.random(in: 1...3, using: &random)) * 3_600 }
            let roll = Int.random(in: 0..<20, using: &random)
            let direction: InteractionDirection = roll < 9 ? .outgoing : roll < 18 ? .incoming : .unspecified
            let engaged = direction == .outgoing && Int.random(in: 0..<20, using: &random) == 0
            let twins = Int.random(in: 0..<10, using: &random) < 3 ? 2 : 1
            for _ in 0..<twins {
                let conversation = names.randomElement(using: &random) ?? "a"
                let identifier: String?
                let idRoll = Int.random(in: 0..<20, using: &random)
                if idRoll == 0, let used = identifiers[account]?.randomElement(using: &random) {
                    identifier = used
                } else if idRoll == 1 {
                    identifier = nil
                } else {
                    identifier = "d\(history.count)"
                    identifiers[account, default: []].append("d\(history.count)")
                }
                let isGroup = conversation.hasPrefix("g")
                let intent = SendMessageIntent(
                    conversationIdentifier: conversation, speakableGroupName: isGroup ? "Group \(conversation)" : nil,
                    recipients: [Person(customIdentifier: conversation)])
                history.append(
                    Interaction(
                        account: account, identifier: identifier, date: Timestamp(seconds: when), direction: direction,
                        intent: intent, isEngagedSuggestion: engaged))
            }
        }
        return history
    }
}
