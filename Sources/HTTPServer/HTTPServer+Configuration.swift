import CSystem

extension HTTPServer {
    /// Whether a server can listen on `host`: `localhost`, or an IPv4 or IPv6 address literal (with or without
    /// brackets); a configuration can be checked before anything starts.
    public static func canListen(on host: String) -> Bool { ListeningSocket.isAddress(host) }

    /// Whether `host` is a loopback address (`localhost`, 127.0.0.0/8, `::1` however written): a server on it
    /// reaches no one but this machine.
    public static func isLoopback(_ host: String) -> Bool { ListeningSocket.isLoopback(host) }

    /// Where the server listens and the limits it holds every client to.
    ///
    /// The defaults suit a service behind a load balancer on a small machine: a few thousand open connections, each
    /// bounded in memory and idle time, and request bodies up to 8 MiB (a JSON Lines import of tens of thousands
    /// of donations).
    public struct Configuration: Sendable, Equatable {
        /// The address to bind, exactly: an IPv4 literal (`127.0.0.1`, `0.0.0.0` for every interface), an IPv6
        /// literal with or without brackets (`::1`, `[::]`; IPv6 only, never IPv4-mapped), or `localhost`, which
        /// is `127.0.0.1`. Default `127.0.0.1`.
        public var host: String
        /// The TCP port; 0 asks the system for a free one (`HTTPServer.address` tells which). Default 8080.
        public var port: Int
        /// Threads that serve connections, each with its own epoll set; a handler runs on one of them, so a slow
        /// handler holds up the other connections of its thread. Default: one per online processor.
        public var workerThreads: Int
        /// Threads of the server's own for the handlers of requests that may wait (the `mayWait` of `HTTPServer`'s
        /// initializer), so that such a request waits on one of them while its worker goes on with other
        /// connections; a request that finds them all busy waits for one. 0 (the default) runs every handler on a
        /// worker.
        public var handlerThreads: Int
        /// Threads for the handlers of requests that wait only briefly (the `waitsBriefly` of `HTTPServer`'s
        /// initializer, among the requests `mayWait` sends off the workers), such as reads across the network:
        /// kept apart from `handlerThreads`, which are many so that slow requests can wait together, since many
        /// threads busy on few cores queue on every lock they share. 0 (the default) runs them on
        /// `handlerThreads`.
        public var readerThreads: Int
        /// Connections open at once over all threads. At the limit the server stops accepting: further clients
        /// wait in the listen backlog until a connection closes. Default 1,000.
        public var connectionLimit: Int
        /// Connections open at once from one client address; one more is accepted and closed at once. `nil`
        /// (the default) for no limit, since clients behind one proxy share its address.
        public var perIPConnectionLimit: Int?
        /// How long a connection may stay idle (no byte received or sent) before the server closes it: a client
        /// that stops halfway through a request, or a keep-alive connection nobody uses. Also how long it may take
        /// to send a whole request head, from its opening or from the end of its previous request, however many
        /// bytes it sends meanwhile: a client trickling its head a line at a time is closed too. Whole seconds,
        /// rounded up; `.zero` for none. Default 30 s.
        public var connectionTimeout: Duration
        /// Bytes each connection may use for its request line, headers and read buffer: the bound on a request's
        /// head (longer ones get 414 or 431). At least 4,096. Default 32 KiB, MHD's own.
        ///
        /// MHD zeroes the whole area before each request on a kept-alive connection, so it costs time per request
        /// as well as memory: with 64 KiB that `memset` was 13 % of the probe's profile on a trivial route.
        public var memoryLimitPerConnection: Int
        /// The largest request body accepted; a larger one gets 413 before it is read (declared length) or as soon
        /// as it crosses the limit (chunked), and never reaches the handler. A body is held whole in memory until
        /// its handler returns; `bodyBytesInMemoryLimit` bounds them all together. Default 8 MiB.
        public var maximumBodySize: Int
        /// Bytes of request bodies held in memory at once, over every connection: a body that would take the
        /// total past it is refused with 503, a declared one when its head arrives (at once to a client that asked
        /// for `100 Continue`, else once its body has been read and dropped), a chunked one as soon as it would
        /// cross. At least `maximumBodySize`. Without it the worst case is `connectionLimit` bodies of
        /// `maximumBodySize`, gigabytes from one client. Default 64 MiB. Small declared bodies (a 64th of it, 1 MiB at
        /// most) may take an eighth more, which larger ones cannot: a few large bodies sent slowly do not refuse
        /// every small one.
        public var bodyBytesInMemoryLimit: Int
        /// Connections the kernel may hold complete but not yet accepted. Default 1,024 (the kernel caps it at
        /// `net.core.somaxconn`).
        public var listenBacklog: Int
        /// The idle timeout of a connection while it sends a streamed body (`HTTPResponse.streamedBody`), in place
        /// of `connectionTimeout`: the kernel's send queue holds megabytes, and to a client with a small receive
        /// window it drains so slowly that no write goes through for longer than the usual timeout, though the
        /// client reads all along. The producer of a streamed body bounds it with a deadline of its own (the
        /// server's exports: `--export-time-limit`). Whole seconds, rounded up. Default 600 s.
        public var streamedBodyTimeout: Duration = .seconds(600)
        /// The least average rate, in bytes a second, at which a request body must arrive once `connectionTimeout`
        /// has passed since its head: a client sending a byte every few seconds never lets the connection go idle,
        /// and would hold it for as long as the body's length allows (hours for 8 MiB). A body that has come more
        /// slowly than this since the grace ended has its connection closed. 0 for no minimum; nothing is checked
        /// when `connectionTimeout` is `.zero`. Default 1,024 bytes a second: a largest body then takes at most
        /// about two hours and a quarter, and holding a thousand connections costs a client a megabyte a second.
        public var minimumBodyRate: Int = 1024

        /// A configuration; every argument has the default described on its property.
        /// - Parameters:
        ///   - host: the address to bind.
        ///   - port: the TCP port, 0 for a free one.
        ///   - workerThreads: threads that serve connections.
        ///   - handlerThreads: threads for the handlers of requests that may wait, 0 for none.
        ///   - readerThreads: threads for those of them that wait only briefly, 0 to run them on `handlerThreads`.
        ///   - connectionLimit: connections open at once.
        ///   - perIPConnectionLimit: connections open at once from one address, `nil` for no limit.
        ///   - connectionTimeout: idle time before a connection is closed.
        ///   - memoryLimitPerConnection: bytes for a connection's request head and read buffer.
        ///   - maximumBodySize: the largest request body accepted.
        ///   - bodyBytesInMemoryLimit: the bytes of request bodies held at once, over every connection.
        ///   - listenBacklog: the kernel's queue of connections not yet accepted.
        public init(
            host: String = "127.0.0.1", port: Int = 8080, workerThreads: Int = Configuration.onlineProcessors,
            handlerThreads: Int = 0, readerThreads: Int = 0, connectionLimit: Int = 1000, perIPConnectionLimit: Int? = nil, connectionTimeout: Duration = .seconds(30),
            memoryLimitPerConnection: Int = 32 * 1024, maximumBodySize: Int = 8 * 1024 * 1024,
            bodyBytesInMemoryLimit: Int = 64 * 1024 * 1024, listenBacklog: Int = 1024
        ) {
            self.host = host
            self.port = port
            self.workerThreads = workerThreads
            self.handlerThreads = handlerThreads
            self.readerThreads = readerThreads
            self.connectionLimit = connectionLimit
            self.perIPConnectionLimit = perIPConnectionLimit
            self.connectionTimeout = connectionTimeout
            self.memoryLimitPerConnection = memoryLimitPerConnection
            self.maximumBodySize = maximumBodySize
            self.bodyBytesInMemoryLimit = bodyBytesInMemoryLimit
            self.listenBacklog = listenBacklog
        }

        /// The processors online now, at least 1.
        public static var onlineProcessors: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

        /// The idle timeout in whole seconds, rounded up.
        var timeoutSeconds: UInt32 { Self.wholeSeconds(connectionTimeout) }

        /// `streamedBodyTimeout` in whole seconds, rounded up.
        var streamedBodyTimeoutSeconds: UInt32 { Self.wholeSeconds(streamedBodyTimeout) }

        private static func wholeSeconds(_ duration: Duration) -> UInt32 {
            let (seconds, attoseconds) = duration.components
            if seconds < 0 { return 0 }
            let whole = seconds + (attoseconds > 0 ? 1 : 0)
            return UInt32(clamping: whole)
        }

        /// Throws when a value is out of range, saying which and what it may be.
        func validate() throws(HTTPServerError) {
            func check(_ ok: Bool, _ message: @autoclosure () -> String) throws(HTTPServerError) {
                if !ok { throw HTTPServerError(message()) }
            }
            try check((0...65535).contains(port), "port \(port) is out of range; give 0 to 65535 (0 for a free port)")
            try check(
                (1...256).contains(workerThreads), "workerThreads \(workerThreads) is out of range; give 1 to 256")
            try check(
                (0...1024).contains(handlerThreads), "handlerThreads \(handlerThreads) is out of range; give 0 to 1024")
            try check(
                (0...1024).contains(readerThreads), "readerThreads \(readerThreads) is out of range; give 0 to 1024")
            try check(
                (1...1_000_000).contains(connectionLimit),
                "connectionLimit \(connectionLimit) is out of range; give 1 to 1000000")
            try check(
                workerThreads <= connectionLimit,
                "connectionLimit \(connectionLimit) is below workerThreads \(workerThreads); give each thread one")
            if let perIP = perIPConnectionLimit {
                try check(
                    (1...1_000_000).contains(perIP),
                    "perIPConnectionLimit \(perIP) is out of range; give 1 to 1000000, or nil for no limit")
            }
            try check(
                connectionTimeout >= .zero, "connectionTimeout is negative; give a duration, or .zero for none")
            try check(
                (4096...(1 << 30)).contains(memoryLimitPerConnection),
                "memoryLimitPerConnection \(memoryLimitPerConnection) is out of range; give 4096 to 1073741824 bytes")
            try check(
                maximumBodySize >= 0, "maximumBodySize \(maximumBodySize) is negative; give a number of bytes")
            try check(
                minimumBodyRate >= 0,
                "minimumBodyRate \(minimumBodyRate) is negative; give bytes a second, or 0 for no minimum")
            try check(
                bodyBytesInMemoryLimit >= maximumBodySize,
                "bodyBytesInMemoryLimit \(bodyBytesInMemoryLimit) is below maximumBodySize \(maximumBodySize); "
                    + "give at least that, or no body of the largest size could ever be read")
            try check(
                (1...65535).contains(listenBacklog), "listenBacklog \(listenBacklog) is out of range; give 1 to 65535")
        }
    }
}
