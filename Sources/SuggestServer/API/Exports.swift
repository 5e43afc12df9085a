import Dispatch
import HTTPServer
import SuggestCore
import Synchronization

/// The exports being sent (`GET /v1/accounts/{account}/donations`), each as its client reads it: a cursor on a
/// store connection of its own (`DonationStore.openDonationCursor`) makes the next lines when the connection can
/// take them. Built whole, an export would hold its account's history until its client had read it: 500 MB a
/// request for 1.4M donations, 2.4 GB for four clients reading slowly.
final class Exports: Sendable {
    /// Exports being sent now.
    private let sending = Atomic<Int>(0)
    /// Exports being sent now for each tenant, under keys.
    private let sendingFor = Mutex<[String: Int]>([:])
    private let limit: Int
    private let timeLimitSeconds: Int

    /// The most bytes made at one step of an export: a few hundred donations.
    static let stepBytes = 32 << 10

    init(limit: Int, timeLimitSeconds: Int) {
        self.limit = limit
        self.timeLimitSeconds = timeLimitSeconds
    }

    /// The account's export as JSON Lines, its first lines made already (a store that fails at once is answered
    /// with its error status).
    /// The most exports one tenant may be sent at once when the keys open `tenants` tenants: half of them when
    /// there are several, so that one tenant's clients that ask and never read (each holds its room until
    /// `--export-time-limit`) leave the others room; all of them for a single tenant.
    func tenantLimit(tenants: Int) -> Int { tenants > 1 ? max(1, limit / 2) : limit }

    /// - Parameter tenants: how many tenants the keys open now (`tenantLimit`).
    /// - Throws: `APIError` 503 `busy` when `limit` exports are being sent, or `tenantLimit` for the account's
    ///   tenant; the store's errors.
    func body(of account: TenantAccount, tenants: Int, pool: StorePool) throws -> StreamedBody {
        try take(for: account.tenant, limit: tenantLimit(tenants: tenants))
        let cursor: any DonationCursor
        do {
            let store = try pool.openConnection()
            do {
                try store.admitLongRead()
            } catch let error as StoreError where error.kind == .busy {
                // Any tenant's: a deletion's bytes stay in the embedded store's log while exports read it.
                throw Self.busy("a deletion is being erased from the store, which the exports under way delay")
            }
            cursor = try store.openDonationCursor(account: account.storeAccount)
        } catch {
            give(for: account.tenant)
            throw error
        }
        let body = StreamedBody(
            produce: { bytes in
                while bytes.count < Exports.stepBytes {
                    guard var donation = try cursor.next() else { return true }
                    donation.account = account.account
                    bytes += donation.jsonLine.utf8
                    bytes.append(0x0A)
                }
                return false
            },
            end: { [self] in
                cursor.close()
                give(for: account.tenant)
            })
        try body.start()
        // The read is let go of at the limit, by a timer: the lines made already, several megabytes in the sockets'
        // buffers for a client that reads slowly, may keep the producer from being asked again for minutes.
        let seconds = timeLimitSeconds
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [weak body] in
            body?.cutOff("the export took longer than its limit of \(seconds) seconds (--export-time-limit)")
        }
        return body
    }

    /// Takes a room for an export of `tenant`'s, who may have `tenantLimit` at once.
    private func take(for tenant: String?, limit tenantLimit: Int) throws(APIError) {
        guard sending.add(1, ordering: .relaxed).newValue <= limit else {
            sending.subtract(1, ordering: .relaxed)
            throw Self.busy("the server is sending as many exports as it may at once (\(limit))")
        }
        guard let tenant else { return }
        let taken = sendingFor.withLock { counts in
            guard counts[tenant, default: 0] < tenantLimit else { return false }
            counts[tenant, default: 0] += 1
            return true
        }
        guard taken else {
            sending.subtract(1, ordering: .relaxed)
            throw Self.busy(
                "the server is sending as many exports to this tenant as it may at once (\(tenantLimit), half of "
                    + "--max-exports while the keys open several tenants)")
        }
    }

    /// Gives back the room `take(for:)` took.
    private func give(for tenant: String?) {
        if let tenant {
            sendingFor.withLock { counts in
                let left = counts[tenant, default: 1] - 1
                counts[tenant] = left > 0 ? left : nil
            }
        }
        sending.subtract(1, ordering: .relaxed)
    }

    private static func busy(_ why: String) -> APIError {
        APIError(.serviceUnavailable, "busy", why + "; ask again in a moment", headers: ["Retry-After": "1"])
    }
}
