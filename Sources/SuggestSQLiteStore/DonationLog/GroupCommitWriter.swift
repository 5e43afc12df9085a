import Dispatch
import SuggestCore
import Synchronization

/// One writing connection for every connection of a server to one store, committing the donations of requests that
/// arrive together in one transaction (group commit).
///
/// Two things make a server's donations slow when each request commits on its own connection: a commit costs the
/// same whether it carries one donation or fifty, and SQLite empties a connection's page cache whenever another
/// connection has written, so each request re-reads the pages the one before it wrote. Here every donation of a
/// server goes through one connection, whose cache therefore stays valid, and the request that finds nobody writing
/// becomes the leader: it commits everything queued by then, its own work first, each piece in a savepoint of its
/// own, and wakes the others with their outcomes. A piece whose work fails (a donation refused) is rolled back alone;
/// a failed commit fails every piece of it. Nothing is acknowledged before the commit that holds it.
///
/// The leader serves one group, then hands the lead to the oldest waiting request, so that no request writes for
/// others indefinitely.
public final class GroupCommitWriter: Sendable {
    /// Opens the writing connection, on first use: a connection of the same store without a group commit writer.
    public typealias Opener = @Sendable () throws -> SQLiteDonationStore

    /// Counts since the writer was made, for `/metrics`.
    public struct Statistics: Sendable, Equatable {
        /// Transactions committed (or failed) by a leader.
        public var groups = 0
        /// Pieces of work those transactions carried: a donation, or a batch of them.
        public var pieces = 0
    }

    private let open: Opener
    private let state = Mutex(State())
    /// Touched only by the leader of the moment: the lead is handed over through a semaphore, which orders each
    /// leader's use after the one before.
    private let connection = ConnectionSlot()
    /// The most pieces one transaction takes: enough to carry every request of a busy server, few enough that the
    /// leader's own answer does not wait on an unbounded queue.
    static let largestGroup = 256

    private struct State {
        var waiting: [Piece] = []
        var leading = false
        var statistics = Statistics()
    }

    /// - Parameter open: opens the connection the writer commits on, on first use.
    public init(open: @escaping Opener) {
        self.open = open
    }

    /// What has been committed so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Runs `work` on the writing connection inside a transaction shared with other requests' work, and returns
    /// once that transaction is committed.
    /// - Throws: what `work` throws (its changes are rolled back, no one else's), or the store's error when the
    ///   transaction cannot begin or commit (then nothing of it is stored).
    func commit<T>(_ work: @escaping (SQLiteDonationStore) throws -> T) throws -> T {
        let result = ResultSlot<T>()
        let piece = Piece { store in
            do {
                result.value = .success(try work(store))
                return nil
            } catch {
                result.value = .failure(error)
                return error
            }
        }
        let leads = state.withLock { state in
            state.waiting.append(piece)
            guard !state.leading else { return false }
            state.leading = true
            return true
        }
        if !leads {
            piece.wake.wait()
        }
        if leads || piece.leads {
            lead()
        }
        if let failure = piece.commitFailure { throw failure }
        guard let value = result.value else { preconditionFailure("a piece of a committed group has no result") }
        return try value.get()
    }

    /// Commits one group, the first waiting piece (this thread's) first, then passes the lead on or lays it down.
    private func lead() {
        let group = state.withLock { state in
            let group = Array(state.waiting.prefix(Self.largestGroup))
            state.waiting.removeFirst(group.count)
            return group
        }
        let failure = run(group)
        let next = state.withLock { state -> Piece? in
            state.statistics.groups += 1
            state.statistics.pieces += group.count
            guard let next = state.waiting.first else {
                state.leading = false
                return nil
            }
            return next
        }
        for piece in group {
            piece.commitFailure = failure
        }
        // Woken only now: their results are complete, and `lead` touches them no more.
        for piece in group.dropFirst() {
            piece.wake.signal()
        }
        if let next {
            next.leads = true
            next.wake.signal()
        }
    }

    /// The group's transaction: each piece in a savepoint, so that a piece that fails leaves the others' work.
    /// - Returns: why the transaction failed as a whole, or `nil` once it is committed.
    private func run(_ group: [Piece]) -> (any Error)? {
        do {
            let store = try connection.store(opening: open)
            try store.translating {
                try store.database.write {
                    for piece in group {
                        try store.database.execute("SAVEPOINT piece")
                        guard let failure = piece.run(store) else {
                            try store.database.execute("RELEASE piece")
                            continue
                        }
                        do {
                            try store.database.execute("ROLLBACK TO piece; RELEASE piece")
                        } catch {
                            // SQLite ended the whole transaction (a full disk, an I/O error): the piece's own
                            // error says why, which the missing savepoint would not.
                            throw failure
                        }
                    }
                }
            }
            return nil
        } catch {
            return error
        }
    }

    /// One request's work, its outcome, and how it is woken.
    private final class Piece: @unchecked Sendable {
        /// Runs the work on the writing connection; what it threw, if it did (its result holds it too).
        let run: (SQLiteDonationStore) -> (any Error)?
        let wake = DispatchSemaphore(value: 0)
        /// Set by the leader before it wakes this piece's thread: the group's failure, if it failed.
        var commitFailure: (any Error)?
        /// Set before waking: this piece's thread leads the next group.
        var leads = false

        init(run: @escaping (SQLiteDonationStore) -> (any Error)?) { self.run = run }
    }

    /// A piece's result, written by the leader's thread and read by the piece's own after it is woken.
    private final class ResultSlot<T>: @unchecked Sendable {
        var value: Result<T, any Error>?
    }

    /// The writing connection, opened by the first leader; a failed open is tried again by the next.
    private final class ConnectionSlot: @unchecked Sendable {
        private var store: SQLiteDonationStore?

        func store(opening open: Opener) throws -> SQLiteDonationStore {
            if let store { return store }
            let opened = try open()
            // The pieces' savepoints journal what they overwrite: in memory, not in a temporary file created and
            // unlinked for every transaction.
            try opened.translating { try opened.database.execute("PRAGMA temp_store = MEMORY") }
            store = opened
            return opened
        }
    }
}
