import CMicroHTTPD
import Synchronization

/// Cutting off clients too slow to send a request head or body, which would otherwise hold a connection and its
/// memory for as long as MHD's idle timeout keeps being reset.
extension ServerCore {
    /// Shuts down the connections whose client is too slow: one that has waited longer than the head timeout for
    /// a request head (trickling it a line at a time, or idle), and one sending a request body at less than
    /// `minimumBodyRate` on average once the head timeout has passed since its head (a byte every few seconds
    /// resets MHD's idle timeout as a header line did). MHD then closes them as it would any that its client
    /// dropped. Called by the acceptor's loop; looks at most once a second.
    func cutSlowClients() {
        guard headTimeoutNanoseconds > 0 else { return }
        let now = ClientWait.now()
        let last = lastClientSweep.load(ordering: .relaxed)
        guard now - last >= 1_000_000_000 else { return }
        lastClientSweep.store(now, ordering: .relaxed)
        let heads = cutHeads(waitingLongerThan: headTimeoutNanoseconds, now: now)
        if heads > 0 {
            log("closed \(heads) connection\(heads == 1 ? "" : "s") that sent no whole request head within the timeout")
        }
        let bodies = cutSlowBodies(now: now)
        if bodies > 0 {
            log(
                "closed \(bodies) connection\(bodies == 1 ? "" : "s") sending a request body slower than "
                    + "\(minimumBodyRate) bytes a second")
        }
        _ = cutAbandonedBodies(olderThan: 1_000_000_000, now: now)
    }

    /// Shuts down the connections whose client went away while the server waited for its request's body. MHD does
    /// not see a close that arrived with the head (the socket stays in CLOSE-WAIT until the timeout), and until the
    /// request ends its declared body counts in the bodies held in memory and a stop waits for it: a client that
    /// sent heads of 32 MiB and left kept every tenant's donations out for 30 s at a time. A body under way for
    /// `age` nanoseconds (a second, or none when the server stops), with nothing left to read and the client's side
    /// closed, will not complete.
    func cutAbandonedBodies(olderThan age: Int64, now: Int64) -> Int {
        cutConnections { wait in
            let since = wait.bodySince.load(ordering: .relaxed)
            guard since != 0, now - since > age else { return false }
            var byte: UInt8 = 0
            return recv(wait.socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
        }
    }

    /// Shuts down every connection waiting for a request head, or for a body its client has stopped sending, when
    /// the server stops: a head still arriving is no request to let finish (one trickled a line a second held a
    /// stop for its whole grace period).
    func cutWaitingHeads() {
        let now = ClientWait.now()
        _ = cutHeads(waitingLongerThan: -1, now: now)
        _ = cutAbandonedBodies(olderThan: -1, now: now)
    }

    /// Shuts down the connections whose request body, begun more than the head timeout ago, has arrived at less
    /// than `minimumBodyRate` bytes a second since that grace ended.
    /// - Returns: how many.
    func cutSlowBodies(now: Int64) -> Int {
        guard minimumBodyRate > 0 else { return 0 }
        let grace = headTimeoutNanoseconds
        let rate = Double(minimumBodyRate)
        return cutConnections { wait in
            let since = wait.bodySince.load(ordering: .relaxed)
            guard since != 0, now - since > grace else { return false }
            return Double(wait.bodyBytes.load(ordering: .relaxed)) < rate * Double(now - since - grace) / 1e9
        }
    }

    /// Shuts down the connections that have waited for a head longer than `limit` nanoseconds.
    /// - Returns: how many.
    func cutHeads(waitingLongerThan limit: Int64, now: Int64) -> Int {
        cutConnections { wait in
            let since = wait.since.load(ordering: .relaxed)
            return since != 0 && now - since > limit
        }
    }

    /// Shuts down the connections whose wait is `overdue`, and marks them as waiting for nothing, so that a later
    /// sweep does not count them again.
    /// - Returns: how many.
    func cutConnections(where overdue: (ClientWait) -> Bool) -> Int {
        // Under the lock that MHD's close notification takes to remove a wait: a socket is shut down here only
        // while it is still open, never after its number went to another connection.
        clientWaits.withLock { waits in
            var cut = 0
            for wait in waits.values where overdue(wait) {
                wait.since.store(0, ordering: .relaxed)
                wait.bodySince.store(0, ordering: .relaxed)
                _ = shutdown(wait.socket, Int32(SHUT_RDWR))
                cut += 1
            }
            return cut
        }
    }
}
