import Dispatch
import Synchronization

/// A bounded first-in, first-out hand-over of batches from one producer thread to one consumer: how `import`
/// and `eval` parse the next lines on one core while the other records or replays the last ones.
///
/// The producer ends the stream with `nil` (or a batch that is an error); a consumer that stops early calls
/// `cancel()`, and the producer's next `put` returns `false`.
public final class BatchPipe<Batch: Sendable>: Sendable {
    /// What the pipe carries: a batch, an error that ends the stream (the producer's failure, for the consumer to
    /// throw), or `nil` for the end.
    public typealias Item = Result<Batch, any Error>?

    private let items = Mutex<(queue: [Item], cancelled: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore

    /// - Parameter capacity: how many batches the producer may run ahead; below 1 is taken as 1 (with none, the
    ///   first `put` would wait forever).
    public init(capacity: Int) {
        // Made at 0 and raised, not made at `capacity`: libdispatch kills the process (SIGILL) when a semaphore
        // goes away below the value it was made with, which is where a pipe whose consumer stopped early (an
        // invalid line, a cancelled import) leaves `free`.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<max(1, capacity) { free.signal() }
    }

    /// Hands over an item (`nil` marks the end); waits while the pipe is full.
    /// - Returns: `false` when the consumer has gone: the producer should stop.
    public func put(_ item: Item) -> Bool {
        free.wait()
        let open = items.withLock { state in
            if !state.cancelled { state.queue.append(item) }
            return !state.cancelled
        }
        if open { available.signal() }
        return open
    }

    /// The next item, waiting for it; `nil` at the end.
    public func take() -> Item {
        available.wait()
        let item = items.withLock { $0.queue.removeFirst() }
        free.signal()
        return item
    }

    /// Tells the producer to stop, and wakes it if it waits for room.
    public func cancel() {
        items.withLock { $0.cancelled = true }
        free.signal()
    }
}
