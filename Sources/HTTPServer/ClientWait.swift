import CSystem
import Synchronization
/// One connection's wait for what its client must send: since when it waits for a request head (0 while a
/// request is under way), and since when it receives a request body and how much has come. Read by the acceptor's
/// thread (`ServerCore.cutSlowClients()`), written by the connection's worker.
final class ClientWait: Sendable {
    let socket: Int32
    /// Nanoseconds of the monotonic clock; 0 when the connection is not waiting for a head.
    let since = Atomic<Int64>(0)
    /// When the request's head arrived, if a body follows it: nanoseconds of the monotonic clock; 0 when no body
    /// is arriving.
    let bodySince = Atomic<Int64>(0)
    /// The body's bytes received so far.
    let bodyBytes = Atomic<Int>(0)

    init(socket: Int32) {
        self.socket = socket
        since.store(Self.now(), ordering: .relaxed)
    }

    /// A body follows the head that has just arrived.
    func startBody() {
        bodyBytes.store(0, ordering: .relaxed)
        bodySince.store(Self.now(), ordering: .relaxed)
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
