#if canImport(Glibc)
    import Glibc
#endif

/// A response as a test read it off the wire.
public struct HTTPReply: Sendable, CustomStringConvertible {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    /// The first value of a header, whatever the case of its name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    public var description: String { "\(status) \(text.prefix(500))" }
}

/// A minimal HTTP/1.1 client for end-to-end tests of `suggest serve`: one request per connection (`Connection:
/// close`), exact bytes out, the status, headers and a body framed by Content-Length (or the end of the
/// connection) back. Blocking, with a timeout on every read and write.
public struct HTTPClient: Sendable {
    public let host: String
    public let port: Int
    public var timeout: Double
    /// The version of the request line.
    public var httpVersion = "HTTP/1.1"

    public init(host: String = "127.0.0.1", port: Int, timeout: Double = 30) {
        self.host = host
        self.port = port
        self.timeout = timeout
    }

    /// Sends one request and reads its response.
    /// - Parameters:
    ///   - target: the path and query, already percent-encoded.
    ///   - headers: extra header fields (`Host`, `Content-Length` and `Connection` are added).
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws(HarnessError) -> HTTPReply {
        try exchange(method, target, headers: headers, declaredLength: body.count, body: body)
    }

    /// Sends a request's head declaring a body of `declaredLength` bytes and none of the body, and reads what the
    /// server answers: for routes that must refuse a request before reading its body. A server that waits for the
    /// body instead fails with the client's timeout.
    public func requestWithoutSendingItsBody(
        _ method: String, _ target: String, headers: [(String, String)] = [], declaredLength: Int
    ) throws(HarnessError) -> HTTPReply {
        try exchange(method, target, headers: headers, declaredLength: declaredLength, body: [])
    }

    private func exchange(
        _ method: String, _ target: String, headers: [(String, String)], declaredLength: Int, body: [UInt8]
    ) throws(HarnessError) -> HTTPReply {
        var head = "\(method) \(target) \(httpVersion)\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if declaredLength > 0 || method == "POST" || method == "PUT" { head += "Content-Length: \(declaredLength)\r\n" }
        head += "\r\n"
        let descriptor = try connectSocket()
        defer { close(descriptor) }
        try sendAll(descriptor, Array(head.utf8) + body)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                // A reset after the whole response was read (the server closed a connection it answered) is fine.
                if !received.isEmpty { break }
                throw HarnessError("reading the response of \(method) \(target.prefix(80)): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            received += chunk[0..<count]
        }
        return try Self.parse(received, request: "\(method) \(target.prefix(80))")
    }

    /// `request` with a JSON body.
    public func send(
        _ method: String, _ target: String, json: String, contentType: String = "application/json",
        headers: [(String, String)] = []
    ) throws(HarnessError) -> HTTPReply {
        try request(method, target, headers: headers + [("Content-Type", contentType)], body: Array(json.utf8))
    }

    /// Whether a connection is refused now.
    public func isRefused() -> Bool {
        guard let descriptor = try? connectSocket() else { return true }
        close(descriptor)
        return false
    }

    func connectSocket() throws(HarnessError) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw HarnessError("connect to \(host):\(port): \(reason)")
        }
        return descriptor
    }

    private func sendAll(_ descriptor: Int32, _ bytes: [UInt8]) throws(HarnessError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            // The server may answer (413) and close before the whole body is sent: read what it said.
            if sent < 0 { return }
            offset += sent
        }
    }

    static func parse(_ bytes: [UInt8], request: String) throws(HarnessError) -> HTTPReply {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator }) else {
            throw HarnessError("no complete response to \(request): \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw HarnessError("bad status line for \(request): \(head[0])")
        }
        var headers: [(String, String)] = []
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingPrefix(" ").description))
        }
        var body = Array(bytes[(end + 4)...])
        if headers.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1.lowercased() == "chunked" }) {
            body = try dechunked(body, request: request)
        } else if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }),
            body.count > length
        {
            body = Array(body.prefix(length))
        }
        return HTTPReply(status: status, headers: headers, body: body)
    }

    /// A body in chunked transfer coding, decoded; one without its last chunk (the server cut it off) is an error.
    static func dechunked(_ bytes: [UInt8], request: String) throws(HarnessError) -> [UInt8] {
        var body: [UInt8] = []
        var offset = 0
        while true {
            guard let lineEnd = (offset..<max(offset, bytes.count - 1)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                let size = Int(String(decoding: bytes[offset..<lineEnd], as: UTF8.self).prefix { $0 != ";" }, radix: 16)
            else {
                throw HarnessError("the chunked body of \(request) ends without its last chunk, after \(body.count) bytes")
            }
            if size == 0 { return body }
            let start = lineEnd + 2
            guard start + size + 2 <= bytes.count else {
                throw HarnessError("the chunked body of \(request) ends in a chunk, after \(body.count) bytes")
            }
            body += bytes[start..<(start + size)]
            offset = start + size + 2
        }
    }
}

/// A connection to hold open while other requests are made: sends what it is given, never reads.
public final class RawHTTPConnection {
    private var descriptor: Int32

    public init(host: String = "127.0.0.1", port: Int) throws(HarnessError) {
        descriptor = try HTTPClient(host: host, port: port).connectSocket()
    }

    deinit { close() }

    /// Sends every byte of `text`, or throws.
    public func send(_ text: String) throws(HarnessError) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { throw HarnessError("send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// The first bytes the server has sent (its status line), without taking them, once some arrive within
    /// `seconds`; empty when none came.
    public func peek(_ count: Int = 64, within seconds: Double) -> String {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, Int32(seconds * 1000)) > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: count)
        let received = recv(descriptor, &buffer, count, Int32(MSG_PEEK))
        return received > 0 ? String(decoding: buffer[..<received], as: UTF8.self) : ""
    }

    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

extension String {
    /// The lines of a string split at `separator`.
    fileprivate func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(self)
        while let range = rest.firstRange(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}

/// Percent-encodes a path segment or query value (everything but unreserved characters).
public func percentEncoded(_ text: String) -> String {
    var encoded = ""
    for byte in text.utf8 {
        if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
        {
            encoded.unicodeScalars.append(UnicodeScalar(byte))
        } else {
            let hex = String(byte, radix: 16, uppercase: true)
            encoded += "%" + (hex.count == 1 ? "0" : "") + hex
        }
    }
    return encoded
}
