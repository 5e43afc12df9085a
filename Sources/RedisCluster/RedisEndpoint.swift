/// A Redis server's address: a host (IPv4, IPv6 or a name) and a TCP port.
public struct RedisEndpoint: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The host, without brackets for IPv6 (`::1`).
    public var host: String
    /// The TCP port (1...65535).
    public var port: Int

    /// An endpoint from its parts; no check is made.
    /// - Parameters:
    ///   - host: the host name or address, IPv6 without brackets.
    ///   - port: the TCP port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[IPV6]:PORT`, or a bare host (port 6379).
    /// - Parameter text: the address as written in a URL or in a `MOVED` reply.
    /// - Returns: `nil` when the host is empty or the port is not a number in 1...65535.
    public init?(parsing text: Substring) {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            // An IPv6 address written without brackets has several colons: its last group is not a port.
            if host.contains(":") { return nil }
        } else {
            host = text
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "@" }) else { return nil }
        var port = 6379
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number), portText.allSatisfy(\.isASCII) else {
                return nil
            }
            port = number
        }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Orders by host, then port: the order a pipeline takes its connections in, so that two pipelines that need
    /// the same nodes never wait for each other in a cycle.
    public static func < (left: RedisEndpoint, right: RedisEndpoint) -> Bool {
        left.host != right.host ? left.host < right.host : left.port < right.port
    }
}
