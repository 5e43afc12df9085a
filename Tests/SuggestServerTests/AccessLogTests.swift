import CSystem
import SuggestTestSupport
import Testing

@testable import SuggestServer

#if canImport(Glibc)
    import Glibc
#endif

/// The log's own thread and what it does when standard error does not take its lines.
@Suite struct AccessLogTests {
    static func entry(_ id: String) -> AccessLog.Entry {
        AccessLog.Entry(
            requestID: id, method: "GET", route: "/v1/version", status: 200, seconds: 0.001, tenant: nil, bytes: 2)
    }

    /// Everything readable from `descriptor` within `seconds`.
    static func read(_ descriptor: Int32, within seconds: Double) -> String {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `--no-access-log` leaves out request lines, not the server's events: they were held until the server
    /// stopped, so a failed reload of the keys showed only after SIGTERM, and a crash lost it.
    @Test func eventsAreWrittenWithoutRequestLines() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        var log: AccessLog? = AccessLog(descriptor: ends[1], enabled: false)
        log?.event("keys not reloaded", [("why", "not JSON")])
        log?.record(Self.entry("r-1"))
        let written = Self.read(ends[0], within: 1)
        #expect(written.contains(#""event":"keys not reloaded""#), "\(written)")
        #expect(!written.contains("r-1"))
        log = nil
        close(ends[1])
    }

    /// A full disk (or a quota, a file-size limit, an I/O error) is a failure that may pass: the lines wait, whole,
    /// and go out once there is room. They were thrown away, and a line half written had the next joined to it.
    @Test func linesWaitWholeWhileTheDiskIsFull() throws {
        let scratch = try TemporaryDirectory("access-log")
        let descriptor = system_open("/dev/full", O_WRONLY)
        #expect(descriptor >= 0)
        let log = AccessLog(descriptor: descriptor, enabled: true)
        for index in 0..<3 { log.record(Self.entry("r-\(index)")) }
        log.flush(within: .milliseconds(50))
        // The disk has room again: the same descriptor now names a file.
        let file = system_open_creating(scratch("log"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(dup2(file, descriptor) == descriptor)
        close(file)
        log.flush(within: .seconds(1))
        let lines = try readFile(scratch("log")).split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        #expect(lines.count == 3, "\(lines)")
        for (index, line) in lines.enumerated() {
            #expect(line.hasPrefix("{") && line.hasSuffix("}") && line.contains(#""requestId":"r-\#(index)""#))
        }
        close(descriptor)
    }
}
