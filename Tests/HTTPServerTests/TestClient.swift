import SuggestTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A response as the test client read it off the wire.
struct WireResponse: CustomStringConvertible {
    var version: String
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of a header, whatever the case of its name.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    var description: String { "\(version) \(status) \(reason) \(headers.map { "\($0.name): \($0.value)" }) \(text)" }
}

/// Why a connection attempt failed, with the `errno` of `connect`.
struct ConnectFailure: Error, CustomStringConvertible {
    var code: Int32
    var description: String { "connect failed: \(String(cString: strerror(code)))" }
    var refused: Bool { code == ECONNREFUSED }
}

/// One TCP connection to the server under test, with blocking I/O bounded by a timeout: the test sends exact bytes
/// (malformed and hostile ones included) and reads the status line, the headers and a body framed by
/// Content-Length, by chunks, or by the end of the connection.
///
/// Not `Sendable`: one thread uses it.
final class TestConnection {
    private(set) var descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    /// Connects to `host:port` (an IPv4 or IPv6 literal); every read and write gives up after `timeout` seconds.
    static func open(host: String = "127.0.0.1", port: Int, timeout: Double = 5) -> Result<
        TestConnection, ConnectFailure
    > {
        let ipv6 = host.contains(":")
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(ConnectFailure(code: errno)) }
        // Each test's sockets are its own; the timeouts keep a test from hanging on a server that never answers.
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        // Headers and body go in separate sends: without this, Nagle holds the body until the server's delayed
        // ACK, 40 ms a request.
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var result: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(descriptor)
            return .failure(ConnectFailure(code: code))
        }
        return .success(TestConnection(descriptor: descriptor))
    }

    /// Connects or throws.
    static func connected(host: String = "127.0.0.1", port: Int, timeout: Double = 5) throws -> TestConnection {
        try open(host: host, port: port, timeout: timeout).get()
    }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close() }

    /// Closes the connection (once).
    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// The local port of this connection (the server sees it as the client's port).
    var localPort: Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// Sends every byte, or throws.
    func send(_ bytes: [UInt8]) throws(HarnessError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                raw.baseAddress.map { Glibc.send(descriptor, $0 + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
                    ?? 0
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { throw HarnessError("send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Sends text as UTF-8.
    func send(_ text: String) throws(HarnessError) { try send(Array(text.utf8)) }

    /// Reads more bytes into the buffer; false at the end of the connection (or a reset).
    private func fill() throws(HarnessError) -> Bool {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[0..<count]
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return false }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw HarnessError("timed out waiting for the server") }
            throw HarnessError("recv failed: \(String(cString: strerror(errno)))")
        }
    }

    /// One line ending in CRLF, without it.
    private func readLine() throws(HarnessError) -> String {
        while true {
            if let newline = buffer[start...].firstIndex(of: 10) {
                var end = newline
                if end > start && buffer[end - 1] == 13 { end -= 1 }
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = newline + 1
                return line
            }
            guard try fill() else { throw HarnessError("the connection closed in the middle of a line") }
        }
    }

    private func readExactly(_ count: Int) throws(HarnessError) -> [UInt8] {
        while buffer.count - start < count {
            guard try fill() else { throw HarnessError("the connection closed in the middle of a body") }
        }
        let bytes = Array(buffer[start..<(start + count)])
        start += count
        return bytes
    }

    /// Reads one response. A body comes by Content-Length, by chunks, or up to the end of the connection; a
    /// response to HEAD has none (`forHead`).
    func readResponse(forHead: Bool = false) throws(HarnessError) -> WireResponse {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw HarnessError("not a status line: \(statusLine)")
        }
        var response = WireResponse(
            version: String(parts[0]), status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: [],
            body: [])
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw HarnessError("not a header line: \(line)") }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            response.headers.append((String(line[..<colon]), String(value)))
        }
        if forHead || status == 204 || status == 304 || status < 200 { return response }
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                    throw HarnessError("not a chunk size: \(sizeLine)")
                }
                if size == 0 {
                    while try !readLine().isEmpty {}
                    break
                }
                response.body += try readExactly(size)
                _ = try readLine()
            }
        } else if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            response.body = try readExactly(length)
        } else {
            while try fill() {}
            response.body = Array(buffer[start...])
            start = buffer.count
        }
        return response
    }

    /// Sends a request and reads its response.
    func exchange(_ request: String) throws(HarnessError) -> WireResponse {
        try send(request)
        return try readResponse(forHead: request.hasPrefix("HEAD "))
    }

    /// Whether the server has closed the connection: a read sees its end (or a reset) within `timeout` seconds,
    /// with no byte before it. Bytes that arrive first make it false.
    func closesWithoutData(within timeout: Double) -> Bool {
        if buffer.count > start { return false }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        while true {
            let count = recv(descriptor, &byte, 1, 0)
            if count == 0 { return true }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && errno == ECONNRESET { return true }
            return false
        }
    }

    /// Whether no byte arrives within `timeout` seconds and the connection stays open.
    func staysSilent(for timeout: Double) -> Bool {
        if buffer.count > start { return false }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Gives reads `timeout` seconds again (after `closesWithoutData` or `staysSilent`).
    func setTimeout(_ timeout: Double) {
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }
}
