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
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let ipv4 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in.self)
            var bytes = ipv4.pointee.sin_addr
            guard inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
            port = Int(UInt16(bigEndian: ipv4.pointee.sin_port))
        case AF_INET6:
            let ipv6 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in6.self)
            var bytes = ipv6.pointee.sin6_addr
            guard inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
            port = Int(UInt16(bigEndian: ipv6.pointee.sin6_port))
        default:
            return nil
        }
        host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
