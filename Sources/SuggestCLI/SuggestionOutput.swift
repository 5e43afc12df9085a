import SuggestCore

/// How suggestions print for people: a table, and the `--explain` lines. (Their JSON is the library's:
/// `SuggestionList.jsonText`.) Names come from other people: everything shown is escaped for a terminal.
enum SuggestionOutput {
    /// The name a person reads for a conversation, escaped for a terminal.
    static func title(_ suggestion: Suggestion) -> String { TerminalText.escaped(suggestion.title) }

    /// How the table shows a conversation identifier: escaped, in brackets.
    static func identifier(_ identifier: String) -> String { "[" + TerminalText.escaped(identifier) + "]" }

    /// The table `list` prints for people.
    ///
    /// Scores are shown relative to the first suggestion's (1 = as strong as the first): the policy's channels
    /// differ by orders of magnitude, so raw scores read like 5.7e-20.
    /// - Parameter learned: with `--explain` under learned weights, the account's weights, printed under the rows.
    static func table(_ suggestions: [Suggestion], at: Timestamp, learned: LearnedWeightsSummary? = nil) -> String {
        guard !suggestions.isEmpty else { return "No suggestions.\n" + (learned.map(learnedWeights) ?? "") }
        let unit = suggestions[0].explanation.map { LogSpace.value($0.logScore) } ?? 1
        // Columns as the terminal draws them: a CJK name or an emoji takes two per character.
        let titles = suggestions.map { TerminalText.prefix(title($0), columns: 40) }
        let width = max(titles.map(TerminalText.width).max() ?? 0, 12)
        var text = ""
        for (suggestion, title) in zip(suggestions, titles) {
            let rank = String(suggestion.rank)
            text += String(repeating: " ", count: max(0, 3 - rank.count)) + rank + "  "
                + TerminalText.padded(title, to: width + 2)
            text += "score " + score(suggestion, top: suggestions[0]) + "  " + (suggestion.isGroup ? "group" : "person")
            // Counted when the title does not say it all, and only when the intents named anyone; the user's own
            // entry (`isMe`) is nobody the message goes to, and a person given twice is one.
            let people = suggestion.people.count
            if people > 0 && (suggestion.hasGroupName || people != 1) {
                text += " · " + counted(people, "person", plural: "people")
            }
            text += "  " + identifier(suggestion.conversationIdentifier) + "\n"
            if let explanation = suggestion.explanation {
                text += self.explanation(explanation, lastDate: suggestion.lastDate, at: at, unit: unit)
            }
        }
        if let learned { text += learnedWeights(learned) }
        return text
    }

    /// The `--explain` lines of the account's learned weights: how many sends they come from, then each channel's
    /// weight for conversations with one person and for groups, beside the prior it started from.
    ///
    ///     learned from 37 sends (the last 32 weigh against the prior, which counts as 2):
    ///       reply        people 0.41    groups 0.02    prior 0.25
    static func learnedWeights(_ learned: LearnedWeightsSummary) -> String {
        let sends = counted(learned.sends, "send", plural: "sends")
        let prior = JSONWriter.decimal(learned.priorSends, significantDigits: 3)
        var text =
            learned.sends > learned.horizon
            ? "learned from \(sends) (the last \(learned.horizon) weigh against the prior, which counts as \(prior)):\n"
            : "learned from \(sends) (the prior counts as \(prior) more):\n"
        let width = max(learned.channels.map { TerminalText.width(TerminalText.escaped($0.channel)) }.max() ?? 0, 10)
        for channel in learned.channels {
            text += "  " + TerminalText.padded(TerminalText.escaped(channel.channel), to: width + 2)
            text += "people " + weight(channel.person, isFresh: channel.personIsFresh) + "groups "
                + weight(channel.group, isFresh: channel.groupIsFresh) + "prior "
                + JSONWriter.decimal(channel.prior, significantDigits: 3) + "\n"
        }
        if learned.channels.contains(where: { !$0.personIsFresh || !$0.groupIsFresh }) {
            let silence = JSONWriter.decimal(learned.staleAfter, significantDigits: 3)
            text += "  * stale: the kind's mass in the channel has decayed to 2^-\(silence) (\(silence) half-lives after one "
                + "message of weight 1, later after more); the weight learned at such moments is in use\n"
        }
        return text
    }

    /// A weight from 0 to 1 in a column: three significant digits, padded; below a thousandth, `<0.001` (a weight
    /// the mixture has all but dropped, written in full, would be `2.0378444265078933e-73` and break the column).
    /// - Parameter isFresh: `false` marks the weight with `*`, a stale expert's.
    static func weight(_ value: Double, isFresh: Bool = true) -> String {
        let text =
            (value == 0 ? "0" : value < 0.001 ? "<0.001" : JSONWriter.decimal(value, significantDigits: 3))
            + (isFresh ? "" : "*")
        return text + String(repeating: " ", count: max(1, 8 - text.count))
    }

    /// The `--explain` lines under a suggestion.
    /// - Parameter unit: what the terms are divided by, so that they read on the table's relative scale.
    static func explanation(_ explanation: Suggestion.Explanation, lastDate: Timestamp, at: Timestamp, unit: Double)
        -> String
    {
        let scale = unit > 0 && unit.isFinite ? unit : 1
        var parts = explanation.terms.map { "\($0.name) \(format($0.value / scale))" }.joined(separator: " + ")
        if explanation.factor != 1 { parts = "(\(parts)) × \(factor(ln: explanation.logFactor))" }
        var text = "       why: " + parts + "\n"
        text += "            \(explanation.outgoingCount) sent, \(explanation.incomingCount) received"
        if explanation.engagedCount > 0 { text += ", \(explanation.engagedCount) shared from a suggestion" }
        text += "; last \(age(of: lastDate, at: at))"
        if let lastOut = explanation.lastOutgoingDate { text += ", last sent \(age(of: lastOut, at: at))" }
        text += "\n"
        if explanation.matchedPeople > 0 {
            text += "            \(explanation.matchedPeople) of the people in the shared content\n"
        }
        if explanation.lessFeedback > 0 {
            text += "            you asked to suggest it less (×\(explanation.lessFeedback))\n"
        }
        return text
    }

    /// A suggestion's score relative to the first one's: as `format` says, or, below a ten-thousandth when the
    /// explanations give the logarithms, as a power of ten, as `factor(ln:)` shows the factor: a conversation asked
    /// about hundreds of times with "suggest less" scores below the smallest `Double`, and "score 0" says it
    /// scores nothing. Without the explanations such a score is `~0`: a listed conversation's score is never 0,
    /// only too small for a `Double`.
    static func score(_ suggestion: Suggestion, top: Suggestion) -> String {
        guard suggestion.score < 0.0001, let own = suggestion.explanation?.logScore,
            let first = top.explanation?.logScore, own.isFinite, first.isFinite
        else { return suggestion.score == 0 ? "~0" : format(suggestion.score) }
        return powerOfTen(ln: own - first)
    }

    /// A factor of the score, from its logarithm: as `format` says, or below a ten-thousandth as a power of ten
    /// (`10^-662`), as `feedback` says it: the product of hundreds of "suggest less" is below the smallest
    /// `Double`, and "× 0" beside a conversation still listed would be wrong.
    static func factor(ln logFactor: Double) -> String {
        let value = LogSpace.value(logFactor)
        guard value < 0.0001, logFactor.isFinite else { return format(value) }
        return powerOfTen(ln: logFactor)
    }

    /// `e^ln` as `10^N`, N rounded to an integer.
    static func powerOfTen(ln value: Double) -> String {
        "10^\(Int((value / LogSpace.ln(10)).rounded()))"
    }

    /// Four significant digits; a part under a ten-thousandth of the first suggestion's score reads as `~0`.
    static func format(_ value: Double) -> String {
        if value != 0 && value.isFinite && abs(value) < 0.0001 { return "~0" }
        return JSONWriter.decimal(value, significantDigits: 4)
    }

    /// "3 h ago", "2 d ago", "in 5 min".
    static func age(of date: Timestamp, at: Timestamp) -> String {
        let seconds = at.seconds - date.seconds
        let magnitude = abs(seconds)
        let text: String
        if magnitude < 90 {
            text = "\(Int(magnitude)) s"
        } else if magnitude < 5_400 {
            text = "\(Int(magnitude / 60)) min"
        } else if magnitude < 129_600 {
            text = "\(Int(magnitude / 3_600)) h"
        } else {
            text = "\(Int(magnitude / 86_400)) d"
        }
        return seconds >= 0 ? text + " ago" : "in " + text
    }
}
