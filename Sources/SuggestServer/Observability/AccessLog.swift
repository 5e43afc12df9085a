import CSystem
import HTTPServer
import SuggestCore
import Synchronization

/// One JSON line per request on standard error: when, the request id, method, route template, status, time taken,
/// tenant and response size. Never the raw path or query (they hold account and conversation names), never a key.
///
/// Lines are buffered and written every 100 ms or every 64 KiB, so that logging costs a request a copy, not a
/// system call.
final class AccessLog: Sendable {
    private let buffer = Mutex([UInt8]())
    private let descriptor: Int32
    private let enabled: Bool
    private let flusher: Mutex<PeriodicTask?> = Mutex(nil)

    init(descriptor: Int32 = 2, enabled: Bool = true) {
        self.descriptor = descriptor
        self.enabled = enabled
        guard enabled else { return }
        let task = PeriodicTask(label: "suggest.access-log", every: .milliseconds(100)) { [weak self] in self?.flush() }
        flusher.withLock { $0 = task }
        task.start()
    }

    deinit {
        flusher.withLock { $0 }?.stop()
        flush()
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
        let full = buffer.withLock { buffer in
            buffer += writer.bytes
            buffer.append(0x0A)
            return buffer.count >= 1 << 16
        }
        if full { flush() }
    }

    /// A line of the server's own (start, stop, reload), in the same format: its text fields as strings, then its
    /// counts as JSON numbers.
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
        buffer.withLock { buffer in
            buffer += writer.bytes
            buffer.append(0x0A)
        }
        flush()
    }

    /// Writes what is buffered.
    func flush() {
        let bytes = buffer.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { CSystem.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 && system_errno() == EINTR { continue }
            guard written > 0 else { return }  // standard error is gone: nothing more can be said
            offset += written
        }
    }
}
