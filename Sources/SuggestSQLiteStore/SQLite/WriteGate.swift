import CSystem
import SuggestCore
import Synchronization

/// One process-wide lock per database file, shared by every connection of this process to it, and the record of
/// a scrub of its log that a deletion owes.
final class WriteGate: Sendable {
    private let lock = Mutex(())
    /// A file beside the database (`suggest.sqlite-scrub`), there while a deletion's scrub of the log is owed: the
    /// debt outlives the process that owes it (a command exits at once), so that whichever process next opens or
    /// checkpoints the store settles it. Without it, only a write that filled the log cut it, and the deleted
    /// names stayed on disk through any number of reading commands.
    private let scrubMarker: String
    /// The debt, for when the marker cannot be made (a directory this process may not write).
    private let owedHere = Atomic<Bool>(false)
    /// The rewrite owed, when its marker could not be made.
    private let rewriteOwedHere = Atomic<Bool>(false)
    /// Why a debt of this process is in this process alone, while it is owed: a marker that could not be made (a
    /// directory where the user may change the store's files but create none). No other process can settle it.
    private let unnoted = Mutex<String?>(nil)
    /// Why a marker whose debt this process settled is still there: it could not be removed (the directory lets
    /// this user make files but not remove another's, or something else holds the name). Every process that
    /// opens the store then finds the debt and rewrites the whole file again, and says nothing unless told this.
    private let stuck = Mutex<(marker: String, reason: String)?>(nil)

    private static let gates = Mutex<[String: WriteGate]>([:])

    private init(path: String) {
        scrubMarker = path + "-scrub"
        rewriteMarker = path + "-rewrite"
        imports = ImportMarker(databasePath: path)
    }

    /// The marker of an import's transaction under way (`ImportMarker`).
    let imports: ImportMarker

    /// The gate of the database at `path`, found by the path with its links, `.` and `..` resolved: two services
    /// that name one store differently (`store/./suggest.sqlite`, a symbolic link to its directory) share one gate.
    /// (Not by device and inode, which a file made after another was deleted may take over: gates are kept for the
    /// process's life, and a new store found the gate, and the marker paths, of a deleted one. Hard links and bind
    /// mounts still name one file two ways.)
    static func forDatabase(at path: String) -> WriteGate {
        let key = resolved(path)
        return gates.withLock { gates in
            if let gate = gates[key] { return gate }
            let gate = WriteGate(path: path)
            gates[key] = gate
            return gate
        }
    }

    /// `path` resolved by `realpath(3)`, or as given when that fails.
    private static func resolved(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A file beside the database (`suggest.sqlite-rewrite`), there from before a deletion commits until the file
    /// has been rewritten after it (`Database.rewriteAfterDeletion()`).
    private let rewriteMarker: String
    /// How many rewrites this process's deletions have asked for, and through which one the file was rewritten.
    private let rewrites = Mutex<(requested: Int, done: Int)>((0, 0))

    /// `Database.owesFileRewrite`: a marker left by this process or another, or this process's own debt.
    var owesFileRewrite: Bool { rewriteOwedHere.load(ordering: .acquiring) || access(rewriteMarker, F_OK) == 0 }

    func oweFileRewrite() {
        guard let failure = Self.makeMarker(rewriteMarker) else { return }
        rewriteOwedHere.store(true, ordering: .releasing)
        unnoted.withLock { $0 = failure }
    }

    /// `Database.unnotedCleanup`.
    var unnotedDebt: String? { unnoted.withLock { $0 } }

    /// Forgets why a debt is this process's alone once it owes nothing.
    private func forgetUnnotedIfSettled() {
        unnoted.withLock { reason in
            if !owedHere.load(ordering: .acquiring) && !rewriteOwedHere.load(ordering: .acquiring) { reason = nil }
        }
    }

    /// When this process's last rewrite ended, and how long it took.
    private let lastRewrite = Mutex<(ended: ContinuousClock.Instant, took: Duration)?>(nil)

    /// `Database.mayRewriteNow(_:)`.
    func mayRewriteNow(_ pacing: RewritePacing) -> Bool {
        lastRewrite.withLock { last in
            guard let last, last.took >= pacing.heldBackFrom else { return true }
            return ContinuousClock.now - last.ended >= last.took * pacing.pauseFactor
        }
    }

    func noteRewriteAttempt(startedAt started: ContinuousClock.Instant) {
        let now = ContinuousClock.now
        lastRewrite.withLock { $0 = (now, now - started) }
    }

    /// A ticket for a rewrite that starts after this moment.
    func requestRewrite() -> Int { rewrites.withLock { $0.requested += 1; return $0.requested } }

    var rewritesRequested: Int { rewrites.withLock { $0.requested } }

    func isRewritten(through ticket: Int) -> Bool { rewrites.withLock { $0.done >= ticket } }

    /// A rewrite that started after ticket `covered` was issued has finished: the debt is settled, this process's
    /// and any other's (whose deletions committed before the rewrite began, as it took the write lock).
    func noteRewritten(through covered: Int) {
        rewrites.withLock { $0.done = max($0.done, covered) }
        rewriteOwedHere.store(false, ordering: .releasing)
        remove(rewriteMarker)
        forgetUnnotedIfSettled()
    }

    /// `Database.stuckCleanupMarker`: forgotten once the marker is gone (an operator removed it).
    var stuckMarker: String? {
        stuck.withLock { stuck in
            if let marker = stuck?.marker, access(marker, F_OK) != 0 { stuck = nil }
            return stuck?.reason
        }
    }

    /// Removes a settled debt's marker, and keeps why it is still there when it cannot be removed.
    private func remove(_ marker: String) {
        guard unlink(marker) != 0, !ErrorNumber.meansAbsent(system_errno()) else {
            stuck.withLock { if $0?.marker == marker { $0 = nil } }
            return
        }
        let reason =
            "cannot remove \(marker): \(ErrorNumber.describeLast()); until it is removed, every process that opens "
            + "the store rewrites the whole file again, for a deletion already cleaned up"
        stuck.withLock { $0 = (marker, reason) }
    }

    /// `Database.owesLogScrub`: owed by this process, or by any other (its marker).
    var owesLogScrub: Bool { owedHere.load(ordering: .acquiring) || access(scrubMarker, F_OK) == 0 }

    /// Notes that the log may hold deleted data until it is next cut.
    func oweLogScrub() {
        owedHere.store(true, ordering: .releasing)
        if let failure = Self.makeMarker(scrubMarker) { unnoted.withLock { $0 = failure } }
    }

    /// Creates an empty marker file beside the database, if there is none; never through a link: one planted in
    /// its place would have the store truncate the file it names.
    /// - Returns: `nil`, or why the marker could not be made. One there already, that this user may not open (another
    ///   member of the store's group made it), notes the debt all the same: every process finds it as `access` does.
    private static func makeMarker(_ path: String) -> String? {
        let descriptor = system_open_creating(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = "cannot create \(path): \(ErrorNumber.describeLast())"
            return access(path, F_OK) == 0 ? nil : reason
        }
        close(descriptor)
        return nil
    }

    /// The log has been cut: nothing deleted stays in it.
    func settleLogScrub() {
        owedHere.store(false, ordering: .releasing)
        remove(scrubMarker)
        forgetUnnotedIfSettled()
    }

    func withLock<T>(_ body: () throws -> T) throws -> T {
        try lock.withLock { _ in try body() }
    }

    /// `body` under the lock when no connection of this process holds it; `nil`, at once, when one does.
    func ifFree<T>(_ body: () -> T) -> T? {
        lock.withLockIfAvailable { _ in body() }
    }
}
