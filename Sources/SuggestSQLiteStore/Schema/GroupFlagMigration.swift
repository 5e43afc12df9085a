import SuggestCore

/// Migration 10: each snapshot's `is_group` under the rule of `SendMessageIntent.isGroup` that does not count the
/// user's own entry, a person given twice, or a recipient with no field that names them.
///
/// The flag is stored per snapshot, and a conversation's state and its account's learned weights are rebuilt from
/// it (after a deletion, an expiry, a change of policy); left as written, a conversation with the user and one
/// person would stay a group here for good, where the Redis store, which reads the rule from the bodies, rebuilds
/// it as a person. The conversations themselves are rebuilt by the change of the policy's fingerprint that came
/// with the rule (`FrecencyPolicy.stateFingerprint`), in `maintain`'s steps. A thousand snapshots are read at a
/// time, so that memory does not grow with the store.
enum GroupFlagMigration {
    static let snapshotsPerRead = 1_000

    static func run(_ database: Database) throws {
        let page = try database.uncachedStatement(
            "SELECT id, body, is_group FROM snapshots WHERE id > ? ORDER BY id LIMIT ?")
        let update = try database.uncachedStatement("UPDATE snapshots SET is_group = ? WHERE id = ?")
        var after: Int64 = 0
        while true {
            try page.reset([.integer(after), .integer(Int64(snapshotsPerRead))])
            var changed: [(id: Int64, isGroup: Bool)] = []
            var last: Int64?
            while try page.step() {
                let id = page.int(0)
                last = id
                let isGroup = try SQLiteDonationStore.decodeSnapshot(page.text(1) ?? "").isGroup
                if isGroup != (page.int(2) != 0) { changed.append((id, isGroup)) }
            }
            guard let last else { return }
            after = last
            for snapshot in changed { try update.run([.integer(snapshot.isGroup ? 1 : 0), .integer(snapshot.id)]) }
        }
    }
}
