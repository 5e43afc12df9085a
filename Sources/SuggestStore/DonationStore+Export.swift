import SuggestCore

extension DonationStore {
    /// Calls `body` with each stored donation of the account, oldest recorded first (the order `import` read
    /// them in), rebuilt as the donation that was recorded, minus its message text.
    public func forEachDonation(account: String, _ body: (Interaction) throws -> Void) throws {
        try translating {
            try database.read {
                let select = try database.uncachedStatement(
                    """
                    SELECT d.identifier, d.group_identifier, d.date, d.direction, d.engaged, d.content_types, s.body,
                        s.id
                    FROM donations d JOIN snapshots s ON s.id = d.snapshot_id
                    WHERE d.account = ? ORDER BY d.id
                    """)
                try select.reset([.text(account)])
                // Decoded snapshots by row: most donations repeat one their conversation has had before. Bounded, so
                // that an account with millions of distinct snapshots does not hold them all.
                var decoded: [Int64: SendMessageIntent] = [:]
                while try select.step() {
                    let snapshotID = select.int(7)
                    let intent: SendMessageIntent
                    if let known = decoded[snapshotID] {
                        intent = known
                    } else {
                        intent = try DonationStore.decodeSnapshot(select.text(6) ?? "")
                        if decoded.count >= 16_384 { decoded.removeAll(keepingCapacity: true) }
                        decoded[snapshotID] = intent
                    }
                    var interaction = Interaction(
                        account: account, identifier: select.text(0), groupIdentifier: select.text(1),
                        date: Timestamp(seconds: select.double(2)),
                        direction: DonationWriter.direction(select.int(3)), intent: intent,
                        isEngagedSuggestion: select.int(4) != 0)
                    if let types = select.text(5) {
                        interaction.intent.contentTypes = types.split(separator: "\n").map(String.init)
                    }
                    try body(interaction)
                }
            }
        }
    }

    /// The intent stored in a snapshot row.
    static func decodeSnapshot(_ body: String) throws -> SendMessageIntent {
        var body = body
        do {
            return try body.withUTF8 { bytes in try SendMessageIntent(jsonBytes: bytes, path: "intent") }
        } catch {
            throw StoreError(.notAStore, "a stored snapshot is damaged (\(error)); the store needs repair")
        }
    }

    /// How many donations the account holds.
    public func donationCount(account: String) throws -> Int {
        try translating {
            Int(try database.statement("SELECT COUNT(*) FROM donations WHERE account = ?").scalarInt([.text(account)]) ?? 0)
        }
    }

    /// The accounts that have donations, in byte-wise order.
    public func accounts() throws -> [String] {
        try translating {
            let select = try database.statement("SELECT DISTINCT account FROM conversations ORDER BY account")
            try select.reset()
            var accounts: [String] = []
            while try select.step() { if let account = select.text(0) { accounts.append(account) } }
            return accounts
        }
    }
}
