import CSystem
import RedisCluster
import SuggestCore
import Synchronization

/// How often writes of a store (or of every store a server opens) lost to other writers of their accounts, and
/// what the write lease cost them: for `/metrics`, so that an operator sees contention before it turns into 503s.
public final class WriteContentionStatistics: Sendable {
    private let conflictCount = Atomic<Int>(0)
    private let leasedCount = Atomic<Int>(0)
    private let leaseCount = Atomic<Int>(0)
    private let waitedNanoseconds = Atomic<Int>(0)

    public init() {}

    /// Tries read and computed again because another writer changed what they had read.
    public var conflicts: Int { conflictCount.load(ordering: .relaxed) }
    /// Waits for another writer's lease: a try answered `LEASED`, or a lease a write could not take (once for
    /// each wait, however many times it looked at the lease).
    public var leasedTries: Int { leasedCount.load(ordering: .relaxed) }
    /// Leases taken by writes that kept losing.
    public var leasesTaken: Int { leaseCount.load(ordering: .relaxed) }
    /// The time writes slept waiting for other writers' leases, in seconds.
    public var secondsWaited: Double { Double(waitedNanoseconds.load(ordering: .relaxed)) / 1e9 }

    func noteConflict() { conflictCount.add(1, ordering: .relaxed) }
    func noteLeased() { leasedCount.add(1, ordering: .relaxed) }
    func noteLeaseTaken() { leaseCount.add(1, ordering: .relaxed) }
    func noteWait(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        waitedNanoseconds.add(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000), ordering: .relaxed)
    }
}

extension RedisDonationStore {
    /// The way out of starving for a recording that keeps losing to other writers of its account.
    ///
    /// A recording's script checks that what the recording read (its conversations, the account's learned weights)
    /// is unchanged, and is read and computed again when it is not. Under a learned ranking every donation changes
    /// the weights, so a round of thousands of donations, a few hundred milliseconds from its reads to its script,
    /// never found them unchanged while single donations arrived every few milliseconds, and its batch ended busy.
    ///
    /// After losing `conflictsBeforeTaking` times, a recording takes the account's write lease, a key in the
    /// account's slot: until the recording's script runs (and gives it back), or the lease lapses (`duration` after
    /// its last renewal), other recordings' scripts change nothing and answer `LEASED`, and they wait
    /// (`Contention`). The lease only decides who goes first; the checks still decide what is applied. A lease that
    /// lapsed, or a client of an older version that ignores leases, costs a retry, never an update. A person's
    /// deletions and an import's undoing go on whatever lease a recording holds, and maintenance waits for it; one
    /// that keeps losing to recordings (its rewrite of a conversation, its fold of the weights from every donation)
    /// takes the lease too, and from then on waits for other holders.
    struct WriteLease {
        let token: [UInt8]

        init() {
            var random = SystemRandomNumberGenerator()
            token = Array(String(random.next() as UInt64, radix: 16).utf8)
        }

        /// Longer than a round of `chunkSize` donations takes from its reads to its reply on a busy machine, so
        /// that the lease lasts until the round's script; short enough that a writer that died holding it keeps
        /// the account's other writers waiting briefly. A writer renews it at each try, and between a try's steps.
        static let duration = Duration.seconds(3)

        /// `duration` as the scripts and `PEXPIRE` take it.
        static let milliseconds = Int(duration.components.seconds * 1000)

        /// The longest a fold of the weights holds the lease (`refoldWeights`): a fold of a very large account
        /// would keep every recording waiting past its patience; it gives up instead, and its weights stay marked.
        static let longestFold = Duration.seconds(10)

        /// How many times a recording of `donations` loses before it takes the lease. A large one at once: its
        /// next try would lose too, and each costs what computing thousands of donations costs. A few donations
        /// try again without it, since they lose only to a writer that came within their few milliseconds, and
        /// a lease costs a round trip, and every other writer of the account a wait.
        static func conflictsBeforeTaking(donations: Int) -> Int {
            donations >= 64 ? 1 : 3
        }

        /// The same for a deletion's fold of the learned weights, which reads every donation of the account.
        static let conflictsBeforeFolding = 1
    }

    /// One write's tries against the other writers of its account: it counts the tries it lost, takes the
    /// account's lease once they reach `conflictsBeforeLease` (renewing it at each try, and during a long one), and
    /// waits while another writer holds it, `patience` in all.
    struct Contention {
        /// How long a write waits for other writers' leases, in all, before the store answers busy: longer than a
        /// fold holds the lease (`WriteLease.longestFold`), and than a round of `chunkSize` donations takes.
        static let patience = Duration.seconds(15)

        /// How long maintenance's work waits for a recording's lease, in all: it leaves the account for a later
        /// step rather than hold up the others (and a server's shutdown, which waits for the step under way).
        static let backgroundPatience = Duration.seconds(1)

        /// What a write that waited its patience throws.
        static let outOfPatience = StoreError(.busy, "other writes held the account for too long; retry in a moment")

        /// Who writes: what the write's scripts do about another writer's lease, and how long it waits for one.
        enum Writer {
            /// Waits for the lease, `patience` in all.
            case recording
            /// A person's deletion or retention change, an import's undo: goes on whatever lease a recording holds
            /// (until it holds the lease itself).
            case deletion
            /// Maintenance's expiry, rebuild or fold: waits for the lease, `backgroundPatience` in all.
            case maintenance
        }

        private let keys: RedisKeys
        private let conflictsBeforeLease: Int
        /// How the write's scripts treat the lease while it does not hold it.
        private let withoutLease: ScriptBuilder.Lease
        private let lease = WriteLease()
        /// Whether the write holds the lease now.
        private(set) var holdsLease = false
        /// Whether `mayTry` is waiting for another writer's lease (counted once a wait).
        private var waitingToTake = false
        /// When it last took or renewed the lease.
        private var renewed = ContinuousClock.now
        private(set) var conflicts: Int
        private let patience: Duration
        private var waited = Duration.zero
        private var pause = Duration.milliseconds(1)

        /// - Parameter conflicts: the tries the write lost already (a round of the pipelined import, overtaken).
        init(_ keys: RedisKeys, conflictsBeforeLease: Int, as writer: Writer, conflicts: Int = 0) {
            self.keys = keys
            self.conflictsBeforeLease = conflictsBeforeLease
            withoutLease = writer == .deletion ? .ignored : .respected
            patience = writer == .maintenance ? Self.backgroundPatience : Self.patience
            self.conflicts = conflicts
        }

        /// How the next try's script treats the lease.
        var scriptLease: ScriptBuilder.Lease { holdsLease ? .held(token: lease.token) : withoutLease }

        /// Before a try: takes the lease once the write lost often enough, or renews it.
        /// - Returns: `false` when another writer holds it: this waited, and the write tries again.
        mutating func mayTry(_ store: RedisDonationStore) throws(StoreError) -> Bool {
            guard conflicts >= conflictsBeforeLease else { return true }
            if let left = try store.take(lease, keys) {
                holdsLease = false
                if !waitingToTake { store.contention.noteLeased() }
                waitingToTake = true
                try sleep(atMost: left, store)
                return false
            }
            waitingToTake = false
            if !holdsLease { store.contention.noteLeaseTaken() }
            holdsLease = true
            renewed = .now
            return true
        }

        /// During a try that takes a while (reading and computing a round, folding every donation of the account):
        /// renews the lease once a third of its duration passed.
        /// - Returns: `false` when it lapsed and another writer took it: the try would lose, and is counted lost;
        ///   the write stops it (and tries again, or gives up).
        mutating func keepsLease(_ store: RedisDonationStore) throws(StoreError) -> Bool {
            guard holdsLease, ContinuousClock.now - renewed > WriteLease.duration / 3 else { return true }
            if try store.take(lease, keys) != nil {
                holdsLease = false
                try lost(.conflict, store)
                return false
            }
            renewed = .now
            return true
        }

        /// After a try that changed nothing: counts a loss, or, when another writer held the lease, waits until
        /// that lease is gone.
        mutating func lost(_ outcome: ApplyOutcome, _ store: RedisDonationStore) throws(StoreError) {
            guard outcome == .leased else {
                conflicts += 1
                store.contention.noteConflict()
                return
            }
            holdsLease = false
            store.contention.noteLeased()
            // Only the lease is looked at while waiting: the next try's reads (and the numbers it reserves, which
            // the replicas copy) are for when it can win.
            while let left = try store.leaseLeft(keys) {
                try sleep(atMost: left, store)
            }
        }

        /// After a try that was applied: its script gave the lease back.
        mutating func applied() {
            holdsLease = false
        }

        /// Gives the lease back if it still holds it (the write failed, or found nothing left to write), so that
        /// the other writers need not wait for it to lapse.
        mutating func end(_ store: RedisDonationStore) {
            guard holdsLease else { return }
            holdsLease = false
            store.giveBack(lease, keys)
        }

        /// Sleeps a little longer each time, up to 20 ms, and never past `left` (what the holder's lease has left).
        private mutating func sleep(atMost left: Duration, _ store: RedisDonationStore) throws(StoreError) {
            guard waited < patience else { throw Self.outOfPatience }
            let sleep = min(pause, left)
            pause = min(pause * 2, .milliseconds(20))
            waited += sleep
            store.contention.noteWait(sleep)
            let (seconds, attoseconds) = sleep.components
            var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = nanosleep(&time, nil)
        }
    }

    /// `body`'s result, or `nil` when it ran out of patience waiting for another writer's lease (maintenance's
    /// work, which leaves the account for a later step).
    func unlessHeld<Result>(_ body: () throws(StoreError) -> Result) throws(StoreError) -> Result? {
        do {
            return try body()
        } catch where error == Contention.outOfPatience {
            return nil
        }
    }

    /// Takes `lease` for the account of `keys`, or renews it.
    /// - Returns: `nil` when this lease holds it now; else how long another writer's lease has left.
    func take(_ lease: WriteLease, _ keys: RedisKeys) throws(StoreError) -> Duration? {
        var command = RedisCommand(script: RedisScripts.takeLease, keys: [keys.writeLease])
        command.append(lease.token)
        command.append(WriteLease.milliseconds)
        guard let left = try send(command).integer else {
            throw StoreError.damaged("a reply of Redis to a write lease")
        }
        return left == 0 ? nil : .milliseconds(left)
    }

    /// How long the lease of the account of `keys` has left; `nil` when nobody holds it.
    func leaseLeft(_ keys: RedisKeys) throws(StoreError) -> Duration? {
        guard let left = try send(RedisCommand("PTTL", key: keys.writeLease)).integer else {
            throw StoreError.damaged("a reply of Redis to PTTL")
        }
        if left == -1 {
            // A lease without an expiry, which no client of this store sets (one set by hand): it gets a lease's
            // length, as `takeLease` gives it, so that it lapses rather than keep every writer of the account
            // waiting out its patience for as long as it stays.
            var expire = RedisCommand("PEXPIRE", key: keys.writeLease)
            expire.append(WriteLease.milliseconds)
            expire.append("NX")
            _ = try send(expire)
            return WriteLease.duration
        }
        return left == -2 ? nil : .milliseconds(max(left, 1))
    }

    /// Gives `lease` back, if it still holds the account's: after a failure, so that the other writers need not
    /// wait for it to lapse. A reply that does not come leaves it to lapse.
    func giveBack(_ lease: WriteLease, _ keys: RedisKeys) {
        var command = RedisCommand(script: RedisScripts.giveBackLease, keys: [keys.writeLease])
        command.append(lease.token)
        _ = try? send(command)
    }
}
