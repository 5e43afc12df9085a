/// The JSON of what a write did, written once here so that every front end writes the same bytes.
extension DeletionReport {
    /// Writes `{"account": ..., "donations": N, "conversations": [...], "removedConversations": [...]}`,
    /// `"preferencesForgotten": true` when preferences went with it, and `"logTruncated": false` when deleted bytes
    /// are still in the store's files (`logTruncated`): a client that promised its user the data is gone can tell.
    /// - Parameter account: the account deleted from, `nil` for a deletion of everything.
    public func write(to writer: inout JSONWriter, account: String?) {
        writer.beginObject()
        writer.key("account")
        if let account { writer.string(account) } else { writer.null() }
        writer.key("donations")
        writer.integer(donations)
        writer.key("conversations")
        writer.beginArray()
        for id in conversations { writer.string(id) }
        writer.endArray()
        writer.key("removedConversations")
        writer.beginArray()
        for id in removedConversations { writer.string(id) }
        writer.endArray()
        if preferencesForgotten {
            writer.key("preferencesForgotten")
            writer.bool(true)
        }
        if !logTruncated {
            writer.key("logTruncated")
            writer.bool(false)
        }
        writer.endObject()
    }

    /// The report's JSON text, without a line break.
    public func jsonText(account: String?) -> String {
        var writer = JSONWriter()
        write(to: &writer, account: account)
        return writer.text
    }
}

extension ImportReport {
    /// Writes `{"recorded": N, "duplicates": M, "expired": E}`, with the rejected lines when there are any (the
    /// first `keptRejections`, and then `rejectedCount`, all of them).
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("recorded")
        writer.integer(recorded)
        writer.key("duplicates")
        writer.integer(duplicates)
        writer.key("expired")
        writer.integer(expired)
        if !rejected.isEmpty {
            writer.key("rejected")
            writer.beginArray()
            for error in rejected {
                writer.beginObject()
                if let line = error.line {
                    writer.key("line")
                    writer.integer(line)
                }
                writer.optional("field", error.field)
                writer.key("message")
                writer.string(error.message)
                writer.endObject()
            }
            writer.endArray()
            if rejectedCount > rejected.count {
                writer.key("rejectedCount")
                writer.integer(rejectedCount)
            }
        }
        writer.endObject()
    }

    /// The report's JSON text (`write(to:)`), without a line break.
    public var jsonText: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }
}
