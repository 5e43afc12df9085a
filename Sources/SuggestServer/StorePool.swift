import SuggestCore
import Synchronization

/// Store connections for the worker threads: a request takes one, uses it alone, and gives it back.
///
/// A store value is one connection for one thread at a time; the pool hands each to one request at a time, and
/// opens another when every connection is taken (a server has as many requests at once as it has worker threads,
/// plus its maintenance), keeping at most `capacity` idle. A connection whose store said it cannot be written is
/// not kept: SQLite opens a file its process may not write read-only for good, so the pool opens another for the
/// next request, which writes once the file's permissions are put right.
final class StorePool: Sendable {
    typealias Opener = @Sendable () throws -> any DonationStore

    /// A connection out of the pool: used by the one request that took it.
    private final class Connection: @unchecked Sendable {
        let store: any DonationStore
        init(_ store: any DonationStore) { self.store = store }
    }

    private let open: Opener
    private let idle = Mutex<[Connection]>([])
    private let capacity: Int

    init(capacity: Int, open: @escaping Opener) {
        self.capacity = capacity
        self.open = open
    }

    /// Opens one connection now, so that a store that cannot be opened fails the start, not the first request.
    func warm() throws {
        let connection = Connection(try open())
        idle.withLock { $0.append(connection) }
    }

    /// A connection outside the pool, for a task that keeps one for itself.
    func openConnection() throws -> any DonationStore { try open() }

    /// Runs `body` with a connection of its own.
    func withStore<T>(_ body: (any DonationStore) throws -> T) throws -> T {
        let connection = try idle.withLock { $0.popLast() } ?? Connection(open())
        var keep = true
        defer {
            if keep {
                idle.withLock { connections in if connections.count < capacity { connections.append(connection) } }
            }
        }
        do {
            return try body(connection.store)
        } catch let error as StoreError where error.kind == .readOnly {
            keep = false
            throw error
        }
    }
}
