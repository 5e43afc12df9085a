/// The contract's JSON of suggestions, written once here so that every front end (the command line, the server)
/// writes the same bytes.
extension Suggestion {
    /// Writes the suggestion as the contract's object: the conversation, the relative score, then extra fields and,
    /// when present, the explanation.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("rank")
        writer.integer(rank)
        writeConversation(to: &writer)
        writer.key("score")
        writer.number(score, significantDigits: 6)
        writer.key("isGroup")
        writer.bool(isGroup)
        writer.optional("serviceName", serviceName)
        writer.key("lastDate")
        writer.string(rfc3339: lastDate)
        if let explanation {
            writer.key("explanation")
            explanation.write(to: &writer)
        }
        writer.endObject()
    }

    /// The members that name a conversation (identifier, group name, recipients, image): the contract's
    /// `preselected` object holds these alone.
    public func writeConversation(to writer: inout JSONWriter) {
        writer.key("conversationIdentifier")
        writer.string(conversationIdentifier)
        writer.optional("speakableGroupName", speakableGroupName)
        writer.key("recipients")
        writer.beginArray()
        for person in recipients { person.write(to: &writer) }
        writer.endArray()
        writer.optional("image", image)
    }
}

extension Suggestion.Explanation {
    /// Writes the explanation as one JSON object of numbers: `logScore`, each term under its channel's name in
    /// camel case (`reply`), `factor`, the counts, then under a learned ranking each channel's weight
    /// (`replyWeight`) and `learnedFrom`.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("logScore")
        writer.number(logScore)
        for term in terms {
            writer.key(Self.termKey(term.name))
            writer.number(term.value, significantDigits: 6)
        }
        writer.key("factor")
        writer.number(factor, significantDigits: 6)
        writer.key("suggestLess")
        writer.integer(lessFeedback)
        writer.key("matchedPeople")
        writer.integer(matchedPeople)
        writer.key("outgoing")
        writer.integer(outgoingCount)
        writer.key("incoming")
        writer.integer(incomingCount)
        writer.key("engaged")
        writer.integer(engagedCount)
        for weight in learnedWeights {
            writer.key(Self.camelCase(weight.name) + "Weight")
            writer.number(weight.value, significantDigits: 6)
        }
        if let learnedFrom {
            writer.key("learnedFrom")
            writer.integer(learnedFrom)
        }
        writer.endObject()
    }

    /// The members the explanation writes besides its terms.
    static let ownKeys: Set<String> = [
        "logScore", "factor", "suggestLess", "matchedPeople", "outgoing", "incoming", "engaged", "learnedFrom",
    ]

    /// A term's key: its name in camel case, with `Term` after it when that would be one of the explanation's own
    /// members (a policy may name a channel `factor`): an object with a key twice is not JSON a reader can trust.
    static func termKey(_ name: String) -> String {
        let key = camelCase(name)
        return ownKeys.contains(key) ? key + "Term" : key
    }

    /// `short-term` becomes `shortTerm`.
    static func camelCase(_ name: String) -> String {
        var text = ""
        var upper = false
        for character in name {
            if character == "-" {
                upper = true
            } else {
                text += upper ? character.uppercased() : String(character)
                upper = false
            }
        }
        return text
    }
}

extension SuggestionList {
    /// Writes the contract's `list --json` object.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("account")
        writer.string(account)
        writer.key("at")
        writer.string(rfc3339: at)
        writer.key("suggestions")
        if let rendering {
            writer.written(rendering.bytes)
        } else {
            Self.writeSuggestions(suggestions, to: &writer)
        }
        writer.endObject()
    }

    /// Writes the `suggestions` member's array.
    static func writeSuggestions(_ suggestions: [Suggestion], to writer: inout JSONWriter) {
        writer.beginArray()
        for suggestion in suggestions { suggestion.write(to: &writer) }
        writer.endArray()
    }

    /// The contract's `list --json` text, without a line break.
    public var jsonText: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }
}
