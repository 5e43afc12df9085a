import CMicroHTTPD
import CSystem

/// The server's listening socket, made here rather than by MHD so that a failure says exactly why (the port is
/// taken, the address is not this machine's) and the socket binds exactly the address asked for.
struct ListeningSocket {
    /// The socket, non-blocking (`ConnectionAcceptor` polls it).
    let descriptor: Int32
    /// The address it is bound to, with the port the system chose for port 0.
    let address: SocketAddress

    /// Binds `host:port` and listens.
    /// - Throws: `HTTPServerError` when the host is not an address literal or the socket cannot be bound.
    static func open(host: String, port: Int, backlog: Int) throws(HTTPServerError) -> ListeningSocket {
        let literal = host == "localhost" ? "127.0.0.1" : ListeningSocket.unbracketed(host)
        var ipv4 = sockaddr_in()
        var ipv6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, literal, &ipv4.sin_addr) == 1 {
            family = AF_INET
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = UInt16(port).bigEndian
        } else if inet_pton(AF_INET6, literal, &ipv6.sin6_addr) == 1 {
            family = AF_INET6
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = UInt16(port).bigEndian
        } else {
            throw HTTPServerError(
                "host \"\(host)\" is not an IPv4 or IPv6 address; give one such as 127.0.0.1, 0.0.0.0 or ::1, "
                    + "or localhost")
        }
        let shown = family == AF_INET6 ? "[\(literal)]:\(port)" : "\(literal):\(port)"

        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw HTTPServerError("cannot make a socket for \(shown): \(HTTPServerError.describeLast())")
        }
        var on: Int32 = 1
        // A restarted server can bind at once while connections of the last one linger in TIME_WAIT.
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            // `::` means IPv6 only here: the address given, exactly, never IPv4 as well.
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound =
            family == AF_INET
            ? withUnsafePointer(to: &ipv4) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            : withUnsafePointer(to: &ipv6) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        if bound != 0 {
            let code = system_errno()
            close(descriptor)
            throw HTTPServerError("cannot listen on \(shown): \(ListeningSocket.advice(code, port: port))")
        }
        if listen(descriptor, Int32(backlog)) != 0 {
            let reason = HTTPServerError.describeLast()
            close(descriptor)
            throw HTTPServerError("cannot listen on \(shown): \(reason)")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let address = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0) }
        }
        guard named == 0, let address else {
            let reason = HTTPServerError.describeLast()
            close(descriptor)
            throw HTTPServerError("cannot read the address of the socket for \(shown): \(reason)")
        }
        return ListeningSocket(descriptor: descriptor, address: address)
    }

    /// Whether `open(host:port:backlog:)` takes `host`: `localhost`, or an IPv4 or IPv6 address literal (the
    /// latter with or without brackets), not a name to look up.
    static func isAddress(_ host: String) -> Bool {
        let literal = host == "localhost" ? "127.0.0.1" : ListeningSocket.unbracketed(host)
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        return inet_pton(AF_INET, literal, &ipv4) == 1 || inet_pton(AF_INET6, literal, &ipv6) == 1
    }

    /// Whether `host` is an address of this machine's loopback: `localhost`, 127.0.0.0/8, or `::1` however it is
    /// written (`0:0:0:0:0:0:0:1`, bracketed).
    static func isLoopback(_ host: String) -> Bool {
        let literal = host == "localhost" ? "127.0.0.1" : ListeningSocket.unbracketed(host)
        var ipv4 = in_addr()
        if inet_pton(AF_INET, literal, &ipv4) == 1 { return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127 }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &ipv6) == 1 else { return false }
        return withUnsafeBytes(of: &ipv6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
    }

    /// `::1` for `[::1]`.
    private static func unbracketed(_ host: String) -> String {
        guard host.hasPrefix("["), host.hasSuffix("]"), host.count >= 2 else { return host }
        return String(host.dropFirst().dropLast())
    }

    /// What a failed `bind` means and what to do.
    private static func advice(_ code: Int32, port: Int) -> String {
        let reason = HTTPServerError.describe(code)
        switch code {
        case EADDRINUSE: return "\(reason); stop what uses port \(port) or choose another port (0 picks a free one)"
        case EADDRNOTAVAIL: return "\(reason); give an address of this machine, or 0.0.0.0 for all of them"
        case EACCES: return "\(reason); ports below 1024 need privileges, choose a higher port"
        default: return reason
        }
    }

}
