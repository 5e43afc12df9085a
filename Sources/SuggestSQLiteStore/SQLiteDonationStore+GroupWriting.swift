import SuggestCore

/// How the pieces of a server's group commit share one `DonationWriter`.
///
/// A donation's cost is mostly its conversation's: the row, its entries in the sorted lists and its block are
/// written once for every donation of that conversation a writer holds. When each request of a group had a writer
/// of its own, a group of four batches of 1,000 wrote a popular conversation four times; with one writer for the
/// group, once. The writer is flushed at the end of the group, before the commit, so nothing changes for what is
/// acknowledged.
///
/// A savepoint cannot take back what a piece left in the shared writer's memory, so a piece must fail before it
/// records anything (a batch is checked whole first: `refuseFirstInvalid`); one that fails after it began to record,
/// or after the writer wrote the group's work inside its savepoint, fails its whole group (`GroupCommitWriter`), and
/// nothing of the group is stored.
extension SQLiteDonationStore {
    /// Runs `body` with the writer a recording uses: the group's while a group runs on this connection, flushed by
    /// the group; otherwise a new one, flushed here before returning.
    func withDonationWriter<T>(_ body: (DonationWriter) throws -> T) throws -> T {
        if let groupWriter { return try body(groupWriter) }
        let writer = DonationWriter(database: database, ranking: ranking, types: types)
        let result = try body(writer)
        try writer.flush()
        return result
    }

    /// What a group's writer may hold before it writes between two pieces: a server's memory is bounded (a group
    /// carries up to 256 requests), and writing more often costs little once the popular conversations are folded.
    /// 12 MB rather than 32: 20 bodies of 3,000 in flight peaked at 95 MB against 104, at 0.91 of the rate, so that
    /// a server stays under 100 MB with that much in flight (Benchmarks/README.md, "A group's writer bounded to 12
    /// MB").
    static let groupWriterBudget = 12 << 20

    /// Starts a group on this connection, inside its transaction: the pieces record into one writer from here on.
    func beginGroupWriting() {
        groupWriter = DonationWriter(database: database, ranking: ranking, types: types)
    }

    /// How often the group's writer has changed (`DonationWriter.changeCount`): unchanged across a piece that
    /// failed means that its savepoint takes back all of it, and nothing of the other pieces.
    var groupWriterChanges: Int { groupWriter?.changeCount ?? 0 }

    /// `error` as this store reports it: a SQLite failure as a `StoreError` that names the store.
    func translated(_ error: any Error) -> any Error {
        do {
            return try translating { throw error }
        } catch {
            return error
        }
    }

    /// After a piece: writes what the group's writer holds if it is over its budget.
    func groupPieceEnded() throws {
        guard let groupWriter, groupWriter.heldBytes > Self.groupWriterBudget else { return }
        try groupWriter.flush()
    }

    /// Writes what the group's writer holds: the last step of a group, before its commit.
    func flushGroupWriting() throws {
        try groupWriter?.flush()
    }

    /// Ends the group, committed or rolled back: what its writer still holds, if anything, is dropped.
    func endGroupWriting() {
        groupWriter = nil
    }
}
