import CSystem
import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// The way out of starving for a recording that keeps losing to other writers of its account.
    ///
    /// A recording's script checks that what the recording read (its conversations, the account's learned weights)
    /// is unchanged, and is read and computed again when it is not. Under a learned ranking every donation changes
    /// the weights, so a round of thousands of donations, a few hundred milliseconds from its reads to its script,
    /// never found them unchanged while single donations arrived every few milliseconds, and its batch ended busy.
    ///
    /// After losing `conflictsBeforeTaking` times, a recording takes the account's write lease, a key in the
    /// account's slot: until the recording's script runs (and gives it back), or `duration` passed, other
    /// recordings' scripts change nothing and answer `LEASED`, and they wait (`LeaseWait`). The lease only decides
    /// who goes first; the checks still decide what is applied. A lease that lapsed, or a client of an older version
    /// that ignores leases, costs a retry, never an update. Deletions and undoing ignore it.
    struct WriteLease {
        let token: [UInt8]

        init() {
            var random = SystemRandomNumberGenerator()
            token = Array(String(random.next() as UInt64, radix: 16).utf8)
        }

        /// Longer than a round of `chunkSize` donations takes from its reads to its reply on a busy machine, so
        /// that the lease lasts until the round's script; short enough that a writer that died holding it keeps
        /// the account's other writers waiting briefly.
        static let duration = Duration.seconds(3)

        /// How many times a recording of `donations` loses before it takes the lease. A large one at once: its
        /// next try would lose too, and each costs what computing thousands of donations costs. A few donations
        /// try again without it, since they lose only to a writer that came within their few milliseconds, and
        /// a lease costs a round trip, and every other writer of the account a wait.
        static func conflictsBeforeTaking(donations: Int) -> Int {
            donations >= 64 ? 1 : 3
        }
    }

    /// Waits between a recording's tries while another writer holds the account's lease, for at most
    /// `patience` in all.
    struct LeaseWait {
        /// How long a recording waits for other writers' leases, in all, before the store answers busy: several
        /// large rounds in a row, each of them under `WriteLease.duration`.
        static let patience = Duration.seconds(15)

        private let deadline = ContinuousClock.now + patience
        private var pause = Duration.milliseconds(1)

        /// Sleeps a little longer each time, up to 20 ms, and never past `left` (what the holder's lease has left).
        mutating func wait(atMost left: Duration? = nil) throws(StoreError) {
            guard ContinuousClock.now < deadline else {
                throw StoreError(.busy, "other writes held the account for too long; retry in a moment")
            }
            let sleep = min(pause, left ?? pause)
            pause = min(pause * 2, .milliseconds(20))
            let (seconds, attoseconds) = sleep.components
            var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = nanosleep(&time, nil)
        }
    }

    /// Takes `lease` for the account of `keys`, or renews it.
    /// - Returns: `nil` when this lease holds it now; else how long another writer's lease has left.
    func take(_ lease: WriteLease, _ keys: RedisKeys) throws(StoreError) -> Duration? {
        var command = RedisCommand(script: RedisScripts.takeLease, keys: [keys.writeLease])
        command.append(lease.token)
        command.append(Int(WriteLease.duration.components.seconds * 1000))
        guard let left = try send(command).integer else {
            throw StoreError.damaged("a reply of Redis to a write lease")
        }
        return left == 0 ? nil : .milliseconds(left)
    }

    /// Gives `lease` back, if it still holds the account's: after a failure, so that the other writers need not
    /// wait for it to lapse. A reply that does not come leaves it to lapse.
    func giveBack(_ lease: WriteLease, _ keys: RedisKeys) {
        var command = RedisCommand(script: RedisScripts.giveBackLease, keys: [keys.writeLease])
        command.append(lease.token)
        _ = try? send(command)
    }
}
