import CMicroHTTPD

/// An IP address and a port: where a client connected from, or where the server listens.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address in its usual text form: `127.0.0.1`, `::1`.
    public var host: String
    /// The TCP port.
    public var port: Int

    /// An address.
    /// - Parameters:
    ///   - host: the address as text.
    ///   - port: the TCP port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Whether the address is IPv6 (its text holds a colon).
    public var isIPv6: Bool { host.utf8.contains(58) }

    /// `127.0.0.1:8080` or `[::1]:8080`, as in a URL.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The address in a `sockaddr_in` or `sockaddr_in6`; `nil` for any other family.
    init?(_ address: UnsafePointer<sockaddr>) {
        let raw = UnsafeRawPointer(address)
        let host: String?
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let ipv4 = raw.assumingMemoryBound(to: sockaddr_in.self)
            var bytes = ipv4.pointee.sin_addr
            host = SocketAddress.format(AF_INET, &bytes)
            port = Int(UInt16(bigEndian: ipv4.pointee.sin_port))
        case AF_INET6:
            let ipv6 = raw.assumingMemoryBound(to: sockaddr_in6.self)
            var bytes = ipv6.pointee.sin6_addr
            host = SocketAddress.format(AF_INET6, &bytes)
            port = Int(UInt16(bigEndian: ipv6.pointee.sin6_port))
        default:
            return nil
        }
        guard let host else { return nil }
        self.host = host
    }

    /// An address's text, formatted on the stack (this runs once per request).
    private static func format(_ family: Int32, _ bytes: UnsafeRawPointer) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { text in
            inet_ntop(family, bytes, text.baseAddress, socklen_t(text.count)).map { String(cString: $0) }
        }
    }
}
