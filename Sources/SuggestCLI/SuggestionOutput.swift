import SuggestCore
import SuggestSQLiteStore

/// How suggestions print: the contract's JSON, and a table for people.
enum SuggestionOutput {
    /// Writes one suggestion as the contract's JSON object, with the explanation and extra fields after.
    static func write(_ suggestion: Suggestion, explain: Bool, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("rank")
        writer.integer(suggestion.rank)
        writeConversation(suggestion, to: &writer)
        writer.key("score")
        writer.number(suggestion.score, significantDigits: 6)
        writer.key("isGroup")
        writer.bool(suggestion.isGroup)
        writer.optional("serviceName", suggestion.serviceName)
        writer.key("lastDate")
        writer.string(suggestion.ranked.lastDate.rfc3339)
        if explain {
            writer.key("explanation")
            writeExplanation(suggestion.ranked, to: &writer)
        }
        writer.endObject()
    }

    /// The members that name a conversation: identifier, group name, recipients, image.
    static func writeConversation(_ suggestion: Suggestion, to writer: inout JSONWriter) {
        writer.key("conversationIdentifier")
        writer.string(suggestion.conversationIdentifier)
        writer.optional("speakableGroupName", suggestion.speakableGroupName)
        writer.key("recipients")
        writer.beginArray()
        for person in suggestion.recipients { person.write(to: &writer) }
        writer.endArray()
        writer.optional("image", suggestion.image)
    }

    static func writeExplanation(_ ranked: RankedConversation, to writer: inout JSONWriter) {
        let breakdown = ranked.breakdown
        writer.beginObject()
        for term in breakdown.terms {
            writer.key(camelCase(term.name))
            writer.number(term.value, significantDigits: 6)
        }
        writer.key("factor")
        writer.number(breakdown.factor, significantDigits: 6)
        writer.key("suggestLess")
        writer.integer(breakdown.lessFeedback)
        writer.key("matchedPeople")
        writer.integer(breakdown.matchedPeople)
        writer.key("outgoing")
        writer.integer(ranked.state.outgoingCount)
        writer.key("incoming")
        writer.integer(ranked.state.incomingCount)
        writer.key("engaged")
        writer.integer(ranked.state.engagedCount)
        writer.endObject()
    }

    /// `short-term` becomes `shortTerm`.
    static func camelCase(_ name: String) -> String {
        let parts = name.split(separator: "-")
        return parts.enumerated().map { index, part in index == 0 ? String(part) : part.prefix(1).uppercased() + part.dropFirst() }
            .joined()
    }

    /// The name a person reads for a conversation, escaped for a terminal (names come from other people).
    static func title(_ suggestion: Suggestion) -> String {
        if let name = suggestion.speakableGroupName { return TerminalText.escaped(name) }
        guard !suggestion.recipients.isEmpty else { return TerminalText.escaped(suggestion.conversationIdentifier) }
        // Appended one by one: `joined(separator:)` searches the run-time conformance tables on its first use.
        var title = ""
        for person in suggestion.recipients {
            if !title.isEmpty { title += ", " }
            title += person.displayName ?? person.customIdentifier ?? person.personHandle?.value ?? "?"
        }
        return TerminalText.escaped(title)
    }

    /// How the table shows a conversation identifier: escaped, in brackets.
    static func identifier(_ identifier: String) -> String { "[" + TerminalText.escaped(identifier) + "]" }

    /// The table `list` prints for people.
    ///
    /// Scores are shown relative to the first suggestion's (1 = as strong as the first): the policy's channels
    /// differ by orders of magnitude, so raw scores read like 5.7e-20; `--json` keeps the raw values.
    static func table(_ suggestions: [Suggestion], explain: Bool, at: Timestamp) -> String {
        guard !suggestions.isEmpty else { return "No suggestions.\n" }
        let logUnit = suggestions[0].ranked.logScore
        // Columns as the terminal draws them: a CJK name or an emoji takes two per character.
        let titles = suggestions.map { TerminalText.prefix(title($0), columns: 40) }
        let width = max(titles.map(TerminalText.width).max() ?? 0, 12)
        var text = ""
        for (suggestion, title) in zip(suggestions, titles) {
            let rank = String(suggestion.rank)
            text += String(repeating: " ", count: max(0, 3 - rank.count)) + rank + "  "
                + TerminalText.padded(title, to: width + 2)
            text += "score " + format(LogSpace.value(suggestion.ranked.logScore - logUnit)) + "  "
                + (suggestion.isGroup ? "group" : "person")
            // Counted when the title does not say it all, and only when the intents named anyone.
            if !suggestion.recipients.isEmpty && (suggestion.speakableGroupName != nil || suggestion.recipients.count != 1) {
                text += " · " + counted(suggestion.recipients.count, "person", plural: "people")
            }
            text += "  " + identifier(suggestion.conversationIdentifier) + "\n"
            if explain { text += explanation(suggestion.ranked, at: at, unit: LogSpace.value(logUnit)) }
        }
        return text
    }

    /// The `--explain` lines under a suggestion.
    /// - Parameter unit: what the terms are divided by, so that they read on the table's relative scale.
    static func explanation(_ ranked: RankedConversation, at: Timestamp, unit: Double) -> String {
        let breakdown = ranked.breakdown
        let scale = unit > 0 && unit.isFinite ? unit : 1
        var parts = breakdown.terms.map { "\($0.name) \(format($0.value / scale))" }.joined(separator: " + ")
        if breakdown.factor != 1 { parts = "(\(parts)) × \(format(breakdown.factor))" }
        var text = "       why: " + parts + "\n"
        let state = ranked.state
        text += "            \(state.outgoingCount) sent, \(state.incomingCount) received"
        if state.engagedCount > 0 { text += ", \(state.engagedCount) shared from a suggestion" }
        text += "; last \(age(of: state.lastDate, at: at))"
        if let lastOut = state.lastOutgoingDate { text += ", last sent \(age(of: lastOut, at: at))" }
        text += "\n"
        if breakdown.matchedPeople > 0 { text += "            \(breakdown.matchedPeople) of the people in the shared content\n" }
        if breakdown.lessFeedback > 0 {
            text += "            you asked to suggest it less (×\(breakdown.lessFeedback))\n"
        }
        return text
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
