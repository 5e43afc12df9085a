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
        writer.string(lastDate.rfc3339)
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
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("logScore")
        writer.number(logScore)
        for term in terms {
            writer.key(Self.camelCase(term.name))
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
        writer.endObject()
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
        writer.string(at.rfc3339)
        writer.key("suggestions")
        writer.beginArray()
        for suggestion in suggestions { suggestion.write(to: &writer) }
        writer.endArray()
        writer.endObject()
    }

    /// The contract's `list --json` text, without a line break.
    public var jsonText: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }
}
