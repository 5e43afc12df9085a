import CSystem
import Dispatch
import HTTPServer
import SuggestCore
import Synchronization

/// The store's upkeep in the background: small maintenance steps (`MaintenanceBudget.step`) every few seconds,
/// each on a connection of its own, so that expiry and policy rebuilds never run behind a request; and a
/// checkpoint every second, which makes what was acknowledged durable against a power loss without a request
/// ever waiting for it (the connections' own checkpoints start the log over when it reaches its limit: after a
/// burst, or under a stream of large groups, whose log this one leaves for them), and in
/// which the embedded store also brings its ranking mirror up to date (`SQLiteDonationStore.checkpoint()`).
final class StoreUpkeep: Sendable {
    private let task: PeriodicTask
    private let checkpoints: PeriodicTask
    private let checkpointer: Checkpointer

    /// The connection the checkpoints run on, its own for the server's life: a checkpoint tells a log that writes
    /// are still coming into from a quiet one by what its connection saw at the one before (`SQLiteDonationStore
    /// .checkpoint()`), which a connection from the pool, another each time, would not know. Used by one thread at a
    /// time: the periodic task's, then the stop's, after the task has ended.
    private final class Checkpointer: @unchecked Sendable {
        private let pool: StorePool
        private let log: AccessLog
        private var store: (any DonationStore)?
        /// The failure the last checkpoint logged, and how many times in a row it has failed so since: a store that
        /// stays broken (read-only, deleted) is logged when its failure starts, changes or ends, and once a minute,
        /// not every second.
        private var failure: (message: String, count: Int)?
        /// The store's upkeep warning last logged (`DonationStore.upkeepWarning`): logged when it starts or changes.
        private var warning: String?

        init(pool: StorePool, log: AccessLog) {
            self.pool = pool
            self.log = log
        }

        func checkpoint() {
            do {
                let store = try self.store ?? pool.openConnection()
                self.store = store
                try store.checkpoint()
                if store.upkeepWarning != warning {
                    warning = store.upkeepWarning
                    if let warning { log.event("upkeep warning", [("warning", warning)]) }
                }
                if let failure {
                    log.event("checkpoint recovered", counts: [("failures", failure.count)])
                    self.failure = nil
                }
            } catch {
                let message = "\(error)"
                if let failure, failure.message == message {
                    self.failure?.count += 1
                    guard (failure.count + 1) % 60 == 0 else { return }
                    log.event("checkpoint failed", [("error", message)], counts: [("failures", failure.count + 1)])
                } else {
                    failure = (message, 1)
                    log.event("checkpoint failed", [("error", message)])
                }
            }
        }
    }

    init(pool: StorePool, log: AccessLog) {
        let checkpointer = Checkpointer(pool: pool, log: log)
        self.checkpointer = checkpointer
        checkpoints = PeriodicTask(label: "suggest.checkpoint", every: .seconds(1)) { checkpointer.checkpoint() }
        task = PeriodicTask(label: "suggest.maintenance", every: .seconds(5)) {
            // Steps until the work is done or a second has gone, then waits for the next run.
            let started = ContinuousClock.now
            do {
                while ContinuousClock.now - started < .seconds(1) {
                    let report = try pool.withStore { store in try store.maintain(account: nil, now: .now(), budget: .step) }
                    if report.weightsRuleChanged {
                        // Once at an upgrade; again and again while a process of another version writes the store.
                        log.event(
                            "learned weights folded again",
                            [
                                (
                                    "reason",
                                    "they were learned under another version's rule: an upgrade, or, if this comes back, "
                                        + "another version's process writing the store (stop it: docs/storage.md)"
                                )
                            ])
                    }
                    if report.expired.donations > 0 || report.recomputedConversations > 0 {
                        log.event(
                            "maintenance",
                            counts: [
                                ("expiredDonations", report.expired.donations),
                                ("recomputedConversations", report.recomputedConversations),
                            ])
                    }
                    if report.isComplete { break }
                }
            } catch {
                log.event("maintenance failed", [("error", "\(error)")])
            }
        }
    }

    func start() {
        task.start()
        checkpoints.start()
    }

    /// Stops the upkeep, and checkpoints one last time once the last request has been answered: the first call
    /// copies what the last requests committed, the second finds nothing new and cuts the log to nothing, so that
    /// the next process to open the store has no log to read.
    func stop() {
        checkpoints.stop()
        task.stop()
        for _ in 0..<2 { checkpointer.checkpoint() }
    }
}
