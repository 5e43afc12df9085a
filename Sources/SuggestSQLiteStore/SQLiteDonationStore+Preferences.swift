import SuggestCore

extension SQLiteDonationStore {
    /// Never suggest a conversation (or suggest it again). A block outlives new donations and deletion: it is the
    /// person's choice, not part of the history.
    public func setBlocked(_ blocked: Bool, conversation: String, account: String) throws {
        try translating {
            let lastTraceGone = try database.write {
                let existed = try preferenceExists(conversation: conversation, account: account)
                try database.statement(
                    """
                    INSERT INTO preferences(account, conversation_identifier, blocked) VALUES (?1, ?2, ?3)
                    ON CONFLICT(account, conversation_identifier) DO UPDATE SET blocked = ?3
                    """
                ).run([.text(account), .text(conversation), .integer(blocked ? 1 : 0)])
                // An unblock of a conversation never blocked inserts the row and drops it again: nothing was
                // deleted, and no rewrite is owed.
                return try dropEmptyPreferences(conversation: conversation, account: account, hadRow: existed)
            }
            if lastTraceGone { _ = eraseDeletedBytes() }
        }
    }

    /// Records one "Suggest Less": the conversation's score is multiplied by the policy's `lessFactor` once more.
    /// - Returns: how many times it has now been asked.
    @discardableResult
    public func suggestLess(conversation: String, account: String) throws -> Int {
        try translating {
            try database.write {
                try database.statement(
                    """
                    INSERT INTO preferences(account, conversation_identifier, less_feedback) VALUES (?1, ?2, 1)
                    ON CONFLICT(account, conversation_identifier) DO UPDATE SET less_feedback = less_feedback + 1
                    """
                ).run([.text(account), .text(conversation)])
                return Int(
                    try database.statement(
                        "SELECT less_feedback FROM preferences WHERE account = ? AND conversation_identifier = ?"
                    ).scalarInt([.text(account), .text(conversation)]) ?? 0)
            }
        }
    }

    /// Forgets "Suggest Less" for a conversation.
    public func resetFeedback(conversation: String, account: String) throws {
        try translating {
            let lastTraceGone = try database.write {
                try database.statement(
                    "UPDATE preferences SET less_feedback = 0 WHERE account = ? AND conversation_identifier = ?"
                ).run([.text(account), .text(conversation)])
                return try dropEmptyPreferences(conversation: conversation, account: account, hadRow: true)
            }
            if lastTraceGone { _ = eraseDeletedBytes() }
        }
    }

    /// The conversations of an account that the person blocked, in byte-wise order.
    public func blockedConversations(account: String) throws -> [String] {
        try translating {
            let select = try database.statement(
                "SELECT conversation_identifier FROM preferences WHERE account = ? AND blocked = 1")
            try select.reset([.text(account)])
            var identifiers: [String] = []
            while try select.step() { if let identifier = select.text(0) { identifiers.append(identifier) } }
            return identifiers.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    /// Whether the person blocked the conversation.
    public func isBlocked(conversation: String, account: String) throws -> Bool {
        try translating {
            try database.statement(
                "SELECT blocked FROM preferences WHERE account = ? AND conversation_identifier = ?"
            ).scalarInt([.text(account), .text(conversation)]) == 1
        }
    }

    /// Whether the conversation has a preference row: one made and dropped in the same transaction left no bytes
    /// to scrub (an unblock of a name never blocked, which any client may send).
    private func preferenceExists(conversation: String, account: String) throws -> Bool {
        try database.statement(
            "SELECT 1 FROM preferences WHERE account = ? AND conversation_identifier = ?"
        ).scalarInt([.text(account), .text(conversation)]) != nil
    }

    /// Deletes the conversation's preference row if it holds neither a block nor "suggest less" any more.
    /// - Returns: whether that row was the last trace of the conversation in the store (it has no donation): then
    ///   its name must leave the files as a deletion's does (`eraseDeletedBytes`), else an unblock after a deletion
    ///   left it on disk until some later checkpoint. The file's rewrite is noted as owed before the commit.
    /// - Parameter hadRow: whether the row was there before the caller's statement (an insert it just made is no
    ///   trace of anything).
    private func dropEmptyPreferences(conversation: String, account: String, hadRow: Bool) throws -> Bool {
        try database.statement(
            "DELETE FROM preferences WHERE account = ? AND conversation_identifier = ? AND blocked = 0 AND less_feedback = 0"
        ).run([.text(account), .text(conversation)])
        guard database.changes > 0, hadRow else { return false }
        let lastTrace = try database.statement(
            "SELECT 1 FROM conversations WHERE account = ? AND conversation_identifier = ?"
        ).scalarInt([.text(account), .text(conversation)]) == nil
        if lastTrace { database.oweFileRewrite() }
        return lastTrace
    }
}
