import CMicroHTTPD
import CSystem
import Synchronization

/// A response body made while it is sent, for an answer too large to hold in memory (an account's export): MHD
/// asks for the next bytes whenever the connection can take more, and `produce` makes them then, on the thread of
/// the connection's worker. A client that reads slowly holds a little buffer, not the whole body.
///
/// The body goes out in chunked transfer coding. A failure after the first bytes have gone out cannot change the
/// status any more: the connection is closed without the last chunk, which a client reports as an incomplete
/// transfer, and the failure is logged. Over HTTP/1.0 there are no chunks: the close ends the body, complete or not,
/// so a handler whose body may fail should not stream it to an HTTP/1.0 client. A response to HEAD ends its
/// streamed body unread and sends an empty one, on a connection that closes after it.
public final class StreamedBody: @unchecked Sendable {
    /// Appends the next bytes to its argument (a few tens of kilobytes is a good step) and returns whether the
    /// body is complete.
    public typealias Producer = (inout [UInt8]) throws -> Bool

    /// Guards everything below: MHD calls `read` on the connection's worker and `end` when it lets the response
    /// go, which may be another thread (a stopping daemon's).
    private let lock = Mutex(())
    private var produce: Producer?
    private var onEnd: (() -> Void)?
    private var pending: [UInt8] = []
    private var sent = 0
    private var complete = false
    /// Why the body was cut off (`cutOff`), if it was.
    private var cutOffReason: String?
    /// Whether the server ended the body before it was complete: cut off, or its producer failed (each logged).
    private var endedIncomplete = false
    /// Where a failure after the headers went out is reported (`ServerCore.log`), set when the body is queued.
    private var log: (@Sendable (String) -> Void)?

    /// - Parameters:
    ///   - produce: makes the next bytes; called again until it says the body is complete, or throws. It is not
    ///     called again after it throws.
    ///   - end: called once, when the response ends however it ended (sent, the client gone, the server stopped,
    ///     never queued): release what `produce` holds here.
    public init(produce: @escaping Producer, end: @escaping () -> Void) {
        self.produce = produce
        onEnd = end
    }

    /// An empty body sent in chunks: what a response to HEAD carries in place of a streamed body, so that its head
    /// is the one GET would have (`Transfer-Encoding: chunked`, not `Content-Length: 0`).
    public static func empty() -> StreamedBody { StreamedBody(produce: { _ in true }, end: {}) }

    /// A body never queued (its request ended before its answer was) is ended when it goes away.
    deinit {
        let end = onEnd
        onEnd = nil
        end?()
    }

    /// Where a failure after the first bytes is reported: the server's log.
    func attach(log: @escaping @Sendable (String) -> Void) {
        lock.withLock { _ in self.log = log }
    }

    /// Makes the first bytes now, while the status can still say that the body could not be made.
    /// - Throws: what `produce` throws; the body is ended then.
    public func start() throws {
        try lock.withLock { _ in
            do {
                try fill()
            } catch {
                endLocked()
                throw error
            }
        }
    }

    /// Copies the next bytes into `buffer`; MHD's content reader.
    /// - Returns: how many were copied, or -1 at the end of the body, or -2 when it cannot be completed.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lock.withLock { _ -> Int in
            do {
                try fill()
            } catch {
                // A cut-off was logged when it happened.
                if cutOffReason == nil {
                    log?("a streamed response body ended before it was complete: \(error); the connection is closed")
                }
                endedIncomplete = true
                endLocked()
                return -2
            }
            let count = min(buffer.count, pending.count - sent)
            if count == 0 { return complete ? -1 : -2 }
            pending.withUnsafeBytes { bytes in
                buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + sent, byteCount: count)
            }
            sent += count
            return count
        }
    }

    /// Whether the server ended the body before it was complete (`cutOff`, or a failure of its producer), each
    /// logged when it happened: not the client's doing.
    var wasEndedByTheServer: Bool { lock.withLock { _ in endedIncomplete } }

    /// Ends the body: `end` runs, unless it has. Bytes made already are still sent; if the body was not complete,
    /// the connection is closed after them.
    public func end() {
        lock.withLock { _ in endLocked() }
    }

    /// Ends the body unless it is complete, for `reason`, which is logged: a body that takes too long, from any
    /// thread. What it holds is let go of at once; its connection is closed when MHD next asks for bytes, once the
    /// bytes made already (in MHD's and the kernel's buffers, a few megabytes) have gone out at the client's pace.
    public func cutOff(_ reason: String) {
        lock.withLock { _ in
            guard !complete, produce != nil else { return }
            cutOffReason = reason
            endedIncomplete = true
            log?(
                "a streamed response body was cut off: \(reason); what it had made still goes out at the client's pace "
                    + "(the sockets' buffers, a few megabytes), then its connection is closed without the last chunk")
            endLocked()
        }
    }

    /// Runs `produce` until there are bytes not yet sent, or the body is complete; ends it once it is, so that
    /// what `produce` holds is let go of while the client reads the last bytes.
    private func fill() throws {
        while sent == pending.count && !complete {
            guard let produce else {
                throw HTTPServerError(cutOffReason ?? "the response body was ended before it was complete")
            }
            pending.removeAll(keepingCapacity: true)
            sent = 0
            complete = try produce(&pending)
            if complete { endLocked() }
        }
    }

    private func endLocked() {
        produce = nil
        let end = onEnd
        onEnd = nil
        end?()
    }
}

extension StreamedBody: Equatable {
    /// The same body: one object.
    public static func == (first: StreamedBody, second: StreamedBody) -> Bool { first === second }
}

/// MHD's content reader for a `StreamedBody`.
func mhdReadStreamedBody(
    _ closure: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
    guard let closure, let buffer else { return -2 }
    let body = Unmanaged<StreamedBody>.fromOpaque(closure).takeUnretainedValue()
    return body.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size))
}

/// MHD lets go of a `StreamedBody`'s response: the body ends, and MHD's reference to it is released.
func mhdEndStreamedBody(_ closure: UnsafeMutableRawPointer?) {
    guard let closure else { return }
    let body = Unmanaged<StreamedBody>.fromOpaque(closure).takeRetainedValue()
    body.end()
}
