import CSystem
import HTTPServer
import SuggestCore
import Synchronization

/// One JSON line per request on standard error: when, the request id, method, route template, status, time taken,
/// tenant and response size. Never the raw path or query (they hold account and conversation names), never a key.
///
/// Lines are buffered and written every 100 ms by a thread of the log's own, so that logging costs a request a
/// copy, never a system call, and never a wait: standard error may be a pipe that nobody reads (a stuck `| tee`, a
/// blocking container log driver). A request thread that wrote there once its pipe was full hung, then every
/// worker, and SIGTERM could not stop the server. So the log writes only when the descriptor can take it (`poll`),
/// holds at most `capacity` bytes, and counts the lines it had to drop, in a line of its own once it can write again.
final class AccessLog: Sendable {
    private struct Pending {
        var bytes: [UInt8] = []
        /// Lines dropped since the last write, for want of room.
        var dropped = 0
    }

    private let pending = Mutex(Pending())
    /// Held while writing, so that the flushing thread and a server event never interleave their bytes.
    private let writing = Mutex(())
    private let descriptor: Int32
    /// The most bytes one `write` is given: all of them for a regular file, which never waits for a reader;
    /// `PIPE_BUF` for a pipe, socket or terminal, which takes that much whole once `poll` says it has room.
    private let piece: Int
    private let enabled: Bool
    private let flusher: Mutex<PeriodicTask?> = Mutex(nil)
    /// Most bytes held for a descriptor that does not take them: a few seconds of lines at the server's top rate.
    static let capacity = 4 << 20

    init(descriptor: Int32 = 2, enabled: Bool = true) {
        self.descriptor = descriptor
        var info = stat()
        piece = fstat(descriptor, &info) == 0 && system_is_regular_file(info.st_mode) != 0 ? .max : Int(PIPE_BUF)
        self.enabled = enabled
        // Started even without request lines (`--no-access-log`): the server's own events (a failed reload of the
        // keys, a store not ready) must reach standard error while it runs, not only at its stop.
        // Each round writes until everything is out or its 90 ms are up: a reader that keeps up gets every line (a
        // round that stopped at the first full pipe let one pipe's worth out every 100 ms, and dropped the rest).
        let task = PeriodicTask(label: "suggest.access-log", every: .milliseconds(100)) { [weak self] in
            self?.flush(within: .milliseconds(90))
        }
        flusher.withLock { $0 = task }
        task.start()
    }

    deinit {
        flusher.withLock { $0 }?.stop()
        flush(within: .seconds(1))
    }

    struct Entry {
        var requestID: String
        var method: String
        var route: String
        var status: Int
        var seconds: Double
        var tenant: String?
        /// The body's length; `nil` for a body sent as its client reads it, whose length is not known yet.
        var bytes: Int?
        /// A store failure's own words (paths, nodes), which the client's answer leaves out (`APIError.store`).
        var storeError: String? = nil
    }

    /// A method as the log shows it: its first 32 bytes, each byte that may not be in a method (RFC 9110's token
    /// characters) as `?`, so that a method holding a DEL or a terminal escape shows as what it is.
    static func printableMethod(_ method: String) -> String {
        var bytes = method.utf8.prefix(32).map { HTTPToken.allows($0) ? $0 : UInt8(ascii: "?") }
        if method.utf8.count > 32 { bytes += Array("…".utf8) }
        return String(decoding: bytes, as: UTF8.self)
    }

    func record(_ entry: Entry) {
        guard enabled else { return }
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("time")
        writer.string(rfc3339: Timestamp.now())
        writer.key("requestId")
        writer.string(entry.requestID)
        writer.key("method")
        writer.string(Self.printableMethod(entry.method))
        writer.key("route")
        writer.string(entry.route)
        writer.key("status")
        writer.integer(entry.status)
        writer.key("ms")
        writer.number(entry.seconds * 1000, significantDigits: 3)
        writer.optional("tenant", entry.tenant)
        if let bytes = entry.bytes {
            writer.key("bytes")
            writer.integer(bytes)
        } else {
            writer.key("streamed")
            writer.bool(true)
        }
        writer.optional("storeError", entry.storeError)
        writer.endObject()
        append(writer.bytes)
    }

    /// A line of the server's own (start, stop, reload, libmicrohttpd's errors), in the same format: its text fields
    /// as strings, then its counts as JSON numbers. Held for the log's thread, as a request's line is: libmicrohttpd
    /// reports on its own threads, which must not wait for standard error either.
    func event(_ message: String, _ fields: [(String, String)] = [], counts: [(String, Int)] = []) {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("time")
        writer.string(rfc3339: Timestamp.now())
        writer.key("event")
        writer.string(message)
        for (name, value) in fields {
            writer.key(name)
            writer.string(value)
        }
        for (name, count) in counts {
            writer.key(name)
            writer.integer(count)
        }
        writer.endObject()
        append(writer.bytes)
    }

    /// Adds a line, or counts it as dropped when the log already holds `capacity` bytes.
    private func append(_ line: [UInt8]) {
        pending.withLock { pending in
            guard pending.bytes.count + line.count < Self.capacity else {
                pending.dropped += 1
                return
            }
            pending.bytes += line
            pending.bytes.append(0x0A)
        }
    }

    /// Writes what is held, as far as the descriptor takes it within `time`; what it does not take waits for the
    /// next flush, ahead of the lines that come meanwhile. Called by the log's own thread, and once at a stop.
    func flush(within time: Duration) {
        let deadline = ContinuousClock.now + time
        writing.withLock { _ in
            var (bytes, dropped) = pending.withLock { pending in
                defer {
                    pending.bytes.removeAll(keepingCapacity: true)
                    pending.dropped = 0
                }
                return (pending.bytes, pending.dropped)
            }
            if dropped > 0 {
                var writer = JSONWriter()
                writer.beginObject()
                writer.key("time")
                writer.string(rfc3339: Timestamp.now())
                writer.key("event")
                writer.string("access log lines dropped: standard error did not take them")
                writer.key("lines")
                writer.integer(dropped)
                writer.endObject()
                bytes += writer.bytes
                bytes.append(0x0A)
                dropped = 0
            }
            let written = write(bytes, until: deadline)
            guard written < bytes.count else { return }
            pending.withLock { pending in
                // What was not written goes first; lines past the capacity are dropped, and counted.
                var kept = Array(bytes[written...]) + pending.bytes
                if kept.count > Self.capacity {
                    let cut = kept[..<Self.capacity].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
                    pending.dropped += kept[cut...].count { $0 == 0x0A }
                    kept.removeSubrange(cut...)
                }
                pending.bytes = kept
            }
        }
    }

    /// Writes `bytes` in pieces a pipe takes whole once `poll` says it has room (`piece`), so that no piece waits
    /// for a reader past `deadline`.
    /// - Returns: how many bytes were written; all of them, or as many as the descriptor took in time or before a
    ///   failure that may pass (a full disk or quota, a file-size limit until the file is rotated, an I/O error):
    ///   the rest waits, and what passes `capacity` meanwhile is counted as dropped, never cut mid-line. All of them
    ///   too when the descriptor is gone: nothing more can be said there.
    private func write(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) -> Int {
        var offset = 0
        while offset < bytes.count {
            let left = max(Duration.zero, deadline - ContinuousClock.now).components
            let milliseconds = Int32(clamping: left.seconds * 1_000 + left.attoseconds / 1_000_000_000_000_000)
            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let count = poll(&ready, 1, milliseconds)
            if count < 0 && system_errno() == EINTR { continue }
            guard count > 0 else { return count == 0 ? offset : bytes.count }
            // Darwin's poll says POLLNVAL for some devices (a terminal) whose descriptor is fine: write there.
            let gone = Int32(ready.revents) & (POLLERR | POLLHUP) != 0
                || (Int32(ready.revents) & POLLNVAL != 0 && system_descriptor_flags(descriptor) == -1)
            if gone { return bytes.count }
            let length = min(bytes.count - offset, piece)
            let written = bytes.withUnsafeBytes { CSystem.write(descriptor, $0.baseAddress! + offset, length) }
            if written < 0 {
                let number = system_errno()
                if number == EINTR { continue }
                if [EAGAIN, EWOULDBLOCK, ENOSPC, EDQUOT, EFBIG, EIO].contains(number) { return offset }
                return bytes.count
            }
            guard written > 0 else { return bytes.count }
            offset += written
        }
        return offset
    }
}
