import CSystem
import Dispatch
import SuggestCore
import Synchronization
import SystemThread

/// One writing connection for every connection of a server to one store, committing the donations of requests that
/// arrive together in one transaction (group commit).
///
/// Two things make a server's donations slow when each request commits on its own connection: a commit costs the
/// same whether it carries one donation or fifty, and SQLite empties a connection's page cache whenever another
/// connection has written, so each request re-reads the pages the one before it wrote. Here every donation of a
/// server goes through one connection, whose cache therefore stays valid, and one thread does all the writing:
/// while it commits a group, the requests that arrive wait together, and it takes them all as the next group, each
/// piece in a savepoint of its own, then wakes them with their outcomes. A piece whose work fails (a
/// donation refused) is rolled back alone; a failed commit fails every piece of it. Nothing is acknowledged before
/// the commit that holds it.
///
/// A thread of the writer's own writes, not one of the waiting requests, so that under a stream of donations one
/// group follows the next with no hand-over between threads: the writing is the one serial part of a server's
/// donations, and a hand-over would leave it idle until the next thread was scheduled. It is started with the first
/// piece and lives as long as the writer: a queue of libdispatch's asked the system for a thread at each burst,
/// and where the system refused one (a container's limit on processes), libdispatch retried inside `async`, on the
/// request's own thread, so every donation hung for as long as that lasted.
///
/// A piece is written only within `maximumWait` of the moment it was queued, however many groups waited before it
/// for another process's write lock, or for this process's (a deletion's): a group waits for the lock as long as
/// its youngest piece may, and a piece whose time has run out when its turn comes, queued or in the transaction,
/// is refused as busy without being written. A request is never recorded after its client gave up waiting (a
/// retry of a donation without an identifier would record it twice).
public final class GroupCommitWriter: Sendable {
    /// Opens the writing connection, on first use: a connection of the same store without a group commit writer.
    public typealias Opener = @Sendable () throws -> SQLiteDonationStore

    /// Counts since the writer was made, for `/metrics`.
    public struct Statistics: Sendable, Equatable {
        /// Transactions committed that kept at least one piece.
        public var groups = 0
        /// Pieces of work those transactions kept: a donation, or a batch of them (not one that failed and was
        /// rolled back, such as a batch with a bad line).
        public var pieces = 0
    }

    private let open: Opener
    /// How long a piece may wait, from the moment it is queued, until its transaction holds the write lock.
    private let maximumWait: Duration
    private let state = Mutex(State())
    /// Wakes the writing thread; woken once the writer has gone, it ends.
    private let wake = DispatchSemaphore(value: 0)
    /// Touched only on the writing thread.
    private let connection = ConnectionSlot()
    /// How long a piece waits unless told otherwise: as long as one of the store's connections waits for a lock.
    public static var defaultMaximumWait: Duration { .milliseconds(Int64(Database.busyTimeoutMilliseconds)) }

    /// How many pieces wait for their turn, for tests that need a group to hold them all.
    var piecesWaiting: Int { state.withLock { $0.waiting.count } }

    /// The most pieces one transaction takes: enough to carry every request of a busy server, few enough that the
    /// first of them does not wait on an unbounded queue.
    static let largestGroup = 256

    private struct State {
        var waiting: [Piece] = []
        /// Whether `writeWhileWaiting` is running or woken: it takes every piece queued before it stops.
        var writing = false
        /// The writing thread, once started.
        var thread: pthread_t?
        var statistics = Statistics()
    }

    /// - Parameters:
    ///   - maximumWait: how long a piece may wait from the moment it is queued (SQLite's busy timeout of the
    ///     store's connections unless given).
    ///   - open: opens the connection the writer commits on, on first use.
    public init(maximumWait: Duration = GroupCommitWriter.defaultMaximumWait, open: @escaping Opener) {
        self.maximumWait = maximumWait
        self.open = open
    }

    deinit { wake.signal() }

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
        let wakesWriter = try state.withLock { (state: inout State) throws(StoreError) -> Bool in
            // A piece's work that committed through the writer again would wait for itself.
            precondition(
                state.thread.map { pthread_equal($0, pthread_self()) == 0 } ?? true,
                "a piece committed through its own group's writer")
            if state.thread == nil { state.thread = try startWriting() }
            state.waiting.append(piece)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if wakesWriter { wake.signal() }
        piece.wake.wait()
        if let failure = piece.commitFailure { throw failure }
        guard let value = result.value else { preconditionFailure("a piece of a committed group has no result") }
        return try value.get()
    }

    /// Starts the writing thread: it runs `writeWhileWaiting` each time it is woken, until the writer goes.
    /// - Throws: `.busy` when the system refuses a thread (nothing is queued then).
    private func startWriting() throws(StoreError) -> pthread_t {
        let wake = self.wake
        let started = startSystemThread { [weak self] in
            while true {
                wake.wait()
                guard let writer = self else { return }  // the writer has gone (its `deinit` woke this thread)
                writer.writeWhileWaiting()
            }
        }
        switch started {
        case .success(let thread):
            pthread_detach(thread)
            return thread
        case .failure(let refused):
            throw StoreError(
                .busy,
                "cannot start the store's writing thread (\(ErrorNumber.describe(refused.number))); nothing of it "
                    + "was recorded: retry in a moment")
        }
    }

    /// Commits the waiting pieces, a group at a time, until none is left.
    private func writeWhileWaiting() {
        while true {
            let group = state.withLock { state in
                let group = Array(state.waiting.prefix(Self.largestGroup))
                state.waiting.removeFirst(group.count)
                // Decided under the lock: a piece queued after this finds nobody writing and wakes the thread again.
                if group.isEmpty { state.writing = false }
                return group
            }
            guard !group.isEmpty else { return }
            let now = ContinuousClock.now
            let onTime = group.filter { !isLate($0, at: now) }
            for piece in group where isLate(piece, at: now) {
                piece.commitFailure = lateness
                piece.wake.signal()
            }
            guard let youngest = onTime.map(\.queued).max() else { continue }
            let (failure, committed) = run(onTime, waitingAtMost: maximumWait - (now - youngest))
            // What committed only: a batch refused for a bad line counted as carried.
            if failure == nil && committed > 0 {
                state.withLock { state in
                    state.statistics.groups += 1
                    state.statistics.pieces += committed
                }
            }
            // Woken only now: their results are complete, and nothing here touches them again.
            for piece in onTime {
                piece.commitFailure = piece.ownFailure ?? failure ?? (piece.ranLate ? lateness : nil)
                piece.wake.signal()
            }
        }
    }

    /// Whether `piece` may no longer be written: its time ran out waiting.
    private func isLate(_ piece: Piece, at now: ContinuousClock.Instant) -> Bool { now - piece.queued >= maximumWait }

    /// A late piece's refusal.
    private var lateness: StoreError {
        StoreError(
            .busy,
            "the store stayed locked by another write (an import?) for the \(maximumWait.components.seconds) s a "
                + "request may wait; nothing of it was recorded")
    }

    /// The group's transaction: each piece in a savepoint, so that a piece that fails leaves the others' work.
    /// - Returns: why the transaction failed as a whole, or `nil` once it is committed; and how many of its pieces
    ///   it kept.
    /// - Parameter wait: how long the transaction may wait for another process's write lock: what its youngest
    ///   piece has left of `maximumWait` (the older ones that run out meanwhile are not written: `ranLate`).
    private func run(_ group: [Piece], waitingAtMost wait: Duration) -> (failure: (any Error)?, committed: Int) {
        var committed = 0
        do {
            let store = try connection.store(opening: open)
            let (seconds, attoseconds) = wait.components
            let milliseconds = Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
            try store.translating {
                try store.database.withBusyTimeout(milliseconds: milliseconds) {
                    try store.database.write {
                        // The pieces record into one writer (`SQLiteDonationStore+GroupWriting.swift`), which writes
                        // what they hold once, before the commit.
                        store.beginGroupWriting()
                        defer { store.endGroupWriting() }
                        for piece in group {
                            // Its time may have run out while the transaction waited for a lock.
                            guard !isLate(piece, at: ContinuousClock.now) else {
                                piece.ranLate = true
                                continue
                            }
                            try store.database.execute("SAVEPOINT piece")
                            let changes = store.groupWriterChanges
                            guard let failure = piece.run(store) else {
                                try store.database.execute("RELEASE piece")
                                committed += 1
                                try store.groupPieceEnded()
                                continue
                            }
                            // What it began to record is in the shared writer, out of the savepoint's reach; and
                            // what the writer wrote meanwhile, other pieces' work too, is inside it.
                            guard store.groupWriterChanges == changes else {
                                throw AbandonedGroup(piece: piece, failure: store.translated(failure))
                            }
                            do {
                                try store.database.execute("ROLLBACK TO piece; RELEASE piece")
                            } catch {
                                // SQLite ended the whole transaction (a full disk, an I/O error): the piece's own
                                // error says why, which the missing savepoint would not.
                                throw failure
                            }
                        }
                        try store.flushGroupWriting()
                    }
                }
            }
            return (nil, committed)
        } catch let abandoned as AbandonedGroup {
            abandoned.piece.ownFailure = abandoned.failure
            if let error = abandoned.failure as? StoreError, error.kind == .readOnly { connection.close() }
            return (abandoned.othersFailure, 0)
        } catch {
            // A connection opened read-only stays so: the next group opens another, which writes once the file's
            // permissions are put right.
            if let error = error as? StoreError, error.kind == .readOnly { connection.close() }
            return (error, 0)
        }
    }

    /// One request's work, its outcome, and how it is woken.
    private final class Piece: @unchecked Sendable {
        /// Runs the work on the writing connection; what it threw, if it did (its result holds it too).
        let run: (SQLiteDonationStore) -> (any Error)?
        let wake = DispatchSemaphore(value: 0)
        /// Set before this piece's thread is woken: the group's failure, if it failed.
        var commitFailure: (any Error)?
        /// When it was queued, on the monotonic clock: its wait is counted from here (`maximumWait`).
        let queued = ContinuousClock.now
        /// Set when its turn in the transaction came too late for it to be written.
        var ranLate = false
        /// Set when it failed after it began to record into the group's writer: it gets its own error, the rest of
        /// its group `AbandonedGroup.othersFailure`.
        var ownFailure: (any Error)?

        init(run: @escaping (SQLiteDonationStore) -> (any Error)?) { self.run = run }
    }

    /// A piece failed after it began to record into the group's writer, whose memory no savepoint takes back: the
    /// whole transaction is rolled back.
    private struct AbandonedGroup: Error {
        let piece: Piece
        let failure: any Error

        /// What the group's other pieces are told: the store's error when it is one (a full disk fails them all
        /// alike), else that nothing of theirs was recorded and they may be sent again.
        var othersFailure: any Error {
            if failure is StoreError { return failure }
            return StoreError(
                .busy,
                "a request committed together with this one failed midway, so nothing of this one was recorded: "
                    + "send it again")
        }
    }

    /// A piece's result, written on the writing thread and read by the piece's own thread after it is woken.
    private final class ResultSlot<T>: @unchecked Sendable {
        var value: Result<T, any Error>?
    }

    /// The writing connection, opened for the first group; a failed open is tried again for the next.
    private final class ConnectionSlot: @unchecked Sendable {
        private var store: SQLiteDonationStore?

        func close() { store = nil }

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
