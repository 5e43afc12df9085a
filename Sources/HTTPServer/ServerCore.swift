import CMicroHTTPD
import CSystem
import Synchronization

/// What MHD's callbacks share: the handler, the limits and the counters. MHD holds an unretained pointer to it; the
/// `HTTPServer` that owns it stops the daemon before letting it go.
final class ServerCore: Sendable {
    let handler: HTTPServer.Handler
    /// Whether a request's handler runs on `handlerThreads` rather than on the worker that read it.
    let mayWait: @Sendable (HTTPRequest) -> Bool
    let handlerThreads: HandlerThreads?
    /// Whether a request sent off its worker waits only briefly, and so runs on `readerThreads` when there are.
    let waitsBriefly: @Sendable (HTTPRequest) -> Bool
    let readerThreads: HandlerThreads?
    /// Looks at a request's head before its body is read (`HTTPServer.init`'s `screen`).
    let screen: @Sendable (HTTPRequest) -> HTTPResponse?
    /// Sees the requests answered here, before any handler (`HTTPServer.init`'s `refused`).
    let refused: HTTPServer.RefusalHandler
    let log: HTTPServer.LogHandler
    let maximumBodySize: Int
    let bodyBytesInMemoryLimit: Int
    /// Bytes of request bodies read or announced (a declared length counts whole once its head is admitted) and
    /// not yet let go (their requests have not ended), over every connection.
    let bodyBytesInMemory = Atomic<Int>(0)
    /// Requests refused with 503 because their bodies did not fit beside the others.
    let bodiesRefusedForMemory = Atomic<Int>(0)
    /// Requests whose request line has arrived and that have not ended (answered, failed or cut off).
    let inFlight = Atomic<Int>(0)
    /// Requests among `inFlight` whose handler has answered and whose streamed body is being sent.
    let streamingResponses = Atomic<Int>(0)
    /// Set once a stop begins: every response from then on closes its connection.
    let draining = Atomic<Bool>(false)
    /// Connections handed to MHD and not yet closed (`ConnectionAcceptor` counts them in, MHD's notification out).
    let openConnections = Atomic<Int>(0)
    /// How long a connection may take to send a request head, from its opening or the end of its previous request:
    /// the idle timeout (`Configuration.connectionTimeout`) in nanoseconds, 0 for none. MHD's own timeout starts
    /// again at every byte, so a client trickling a header line every few seconds kept its connection for ever.
    let headTimeoutNanoseconds: Int64
    /// The idle timeout of a connection sending a streamed body (`Configuration.streamedBodyTimeout`), seconds.
    let streamedBodyTimeoutSeconds: UInt32
    /// The least average rate, bytes a second, at which a request body must arrive once the head timeout has
    /// passed since its head (`Configuration.minimumBodyRate`); 0 for none.
    let minimumBodyRate: Int
    /// Every open connection's wait for its client, by identity: `cutSlowClients()` looks them over.
    let clientWaits = Mutex<[ObjectIdentifier: ClientWait]>([:])
    /// When `cutSlowClients()` last looked, in nanoseconds of the monotonic clock (it looks once a second).
    private let lastClientSweep = Atomic<Int64>(0)

    /// Set (to any non-null value) on a thread while it runs the handler, so that `stop` can tell it is called
    /// from inside a request, where it would wait for itself.
    private let insideHandler: pthread_key_t

    init(
        handler: @escaping HTTPServer.Handler, mayWait: @escaping @Sendable (HTTPRequest) -> Bool,
        handlerThreads: HandlerThreads?, waitsBriefly: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false },
        readerThreads: HandlerThreads? = nil, screen: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
        refused: @escaping HTTPServer.RefusalHandler = { $0.response }, log: @escaping HTTPServer.LogHandler,
        maximumBodySize: Int, bodyBytesInMemoryLimit: Int = .max, headTimeout: Duration = .zero,
        streamedBodyTimeoutSeconds: UInt32 = 600, minimumBodyRate: Int = 0
    ) throws(HTTPServerError) {
        self.handler = handler
        self.mayWait = mayWait
        self.handlerThreads = handlerThreads
        self.waitsBriefly = waitsBriefly
        self.readerThreads = readerThreads
        self.screen = screen
        self.refused = refused
        self.log = log
        self.maximumBodySize = maximumBodySize
        self.bodyBytesInMemoryLimit = bodyBytesInMemoryLimit
        let (seconds, attoseconds) = headTimeout.components
        headTimeoutNanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        self.streamedBodyTimeoutSeconds = streamedBodyTimeoutSeconds
        self.minimumBodyRate = max(0, minimumBodyRate)
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        // A process has a fixed number of keys (1,024 on Linux): without one, `stop` could not tell its own
        // handlers' threads from others.
        guard created == 0 else {
            throw HTTPServerError("could not make the server's thread key: \(HTTPServerError.describe(created))")
        }
        insideHandler = key
    }

    deinit { pthread_key_delete(insideHandler) }

    /// Lets the handlers queued so far end, and stops both kinds of handler threads.
    func stopHandlerThreads() {
        handlerThreads?.stop()
        readerThreads?.stop()
    }

    /// Whether the calling thread is running this server's handler.
    var isInsideHandler: Bool { pthread_getspecific(insideHandler) != nil }

    /// The pointer MHD passes back to the callbacks.
    var closure: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer) -> ServerCore {
        Unmanaged<ServerCore>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// One call of MHD's access handler: the first when the headers are in, one per piece of body, a last one when
    /// the body is complete.
    func handle(
        _ connection: OpaquePointer, _ context: RequestContext, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?, upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        if !context.headersSeen {
            context.headersSeen = true
            context.connection?.clientWait?.since.store(0, ordering: .relaxed)
            if let (code, ambiguity) = framingAmbiguity(connection) {
                // Refused before a byte of the body is read, and the connection closed: behind a proxy that framed
                // the body otherwise, what follows could be read as another request (request smuggling).
                log("\(ambiguity): answered 400 \(code), closing the connection")
                let answer = closing(.error(status: .badRequest, code: code, message: ambiguity))
                return queue(refusing(answer, connection, context, method: method, version: version), on: connection)
            }
            let declared = declaredLength(connection)
            if declared > maximumBodySize {
                // Queued before any of the body is read: MHD sends it and closes the connection, never reading on.
                return queue(
                    refusing(bodyTooLarge(), connection, context, method: method, version: version), on: connection)
            }
            // A request without a body is answered on the next call, not this one: a response queued now would make
            // MHD close the connection afterwards (it cannot tell that no body follows).
            let chunked = lookUp("Transfer-Encoding", on: connection) != nil
            guard declared > 0 || chunked else { return .YES }
            context.connection?.clientWait?.startBody()
            var refusal: HTTPResponse?
            switch makeRequest(connection, context, method: method, version: version, body: []) {
            case .refused(let answer): refusal = refusing(answer, head: nil, connection, method: method)
            case .made(let head):
                context.head = head
                // Counted and logged by the screen itself when it refuses.
                refusal = screen(head)
            }
            // A declared body is counted whole as its head arrives, so that bodies whose heads arrive together
            // cannot all pass and then cross; a chunked one as its pieces arrive.
            if refusal == nil && !chunked {
                if bodyBytesInMemory.add(declared, ordering: .relaxed).newValue > bodyBytesInMemoryLimit {
                    bodyBytesInMemory.subtract(declared, ordering: .relaxed)
                    refusal = refusing(busy(declared: declared), head: context.head, connection, method: method)
                } else {
                    context.heldBodyBytes = declared
                    context.body.reserveCapacity(declared)
                }
            }
            guard let refusal else { return .YES }
            // A client that waits for `100 Continue` gets the answer now and never sends the body (MHD closes the
            // connection after it). One that sends its body regardless would find the connection closed under it,
            // a broken pipe instead of the answer: its body is read and dropped, and answered once it has arrived.
            if expectsContinue(connection) { return queue(closing(refusal), on: connection) }
            context.refusal = refusal
            return .YES
        }
        let size = uploadSize.pointee
        if size > 0 {
            context.connection?.clientWait?.bodyBytes.add(size, ordering: .relaxed)
            guard let upload else {
                log("libmicrohttpd passed \(size) bytes of body without the bytes; the connection is closed")
                return .NO
            }
            if context.refusal != nil {
                // Read and dropped: the request is answered with its refusal once the body has arrived.
                uploadSize.pointee = 0
                return .YES
            }
            // Only a chunked body gets here past the limit: MHD never passes more than a declared length.
            if context.body.count + size > maximumBodySize {
                refuseStreamedBody(
                    refusing(bodyTooLarge(), head: context.head, connection, method: method),
                    statusLine: "413 Content Too Large",
                    reason: "a chunked request body crossed the limit of \(maximumBodySize) bytes", on: connection)
                return .NO
            }
            // A chunked body's bytes are counted as they come, before they are kept (a declared one was counted
            // whole with its head, and MHD passes no more than it declared).
            let uncounted = context.body.count + size - context.heldBodyBytes
            if uncounted > 0 {
                if bodyBytesInMemory.add(uncounted, ordering: .relaxed).newValue > bodyBytesInMemoryLimit {
                    bodyBytesInMemory.subtract(uncounted, ordering: .relaxed)
                    refuseStreamedBody(
                        refusing(busy(declared: nil), head: context.head, connection, method: method),
                        statusLine: "503 Service Unavailable",
                        reason: "the request bodies held at once would cross \(bodyBytesInMemoryLimit) bytes",
                        on: connection)
                    return .NO
                }
                context.heldBodyBytes += uncounted
            }
            context.body.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: size))
            uploadSize.pointee = 0
            return .YES
        }
        // The body, if any, is complete: the client owes nothing until the response has gone.
        context.connection?.clientWait?.bodySince.store(0, ordering: .relaxed)
        if let answer = context.answer {
            // Called again after a handler thread answered and resumed the connection.
            context.answer = nil
            return queue(answer, on: connection, for: context)
        }
        if let refusal = context.refusal {
            // The body of a refused request has arrived, and was dropped.
            context.refusal = nil
            return queue(refusal, on: connection)
        }
        return respond(connection, context, method: method, version: version)
    }

    /// Builds the request, runs the handler and queues its response.
    private func respond(
        _ connection: OpaquePointer, _ context: RequestContext, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?
    ) -> MHD_Result {
        let body = context.body
        context.body = []
        let request: HTTPRequest
        if var head = context.head {
            // Built when its head arrived: only the body is new.
            context.head = nil
            head.body = body
            request = head
        } else {
            switch makeRequest(connection, context, method: method, version: version, body: body) {
            case .refused(let refusal): return queue(refusing(refusal, head: nil, connection, method: method), on: connection)
            case .made(let made): request = made
            }
        }
        guard let waiting = handlerThreads, mayWait(request) else {
            return queue(answer(request), on: connection, for: context)
        }
        let threads = readerThreads.flatMap { waitsBriefly(request) ? $0 : nil } ?? waiting
        // MHD calls the access handler again once the connection is resumed, and the answer is queued then, on
        // the connection's own worker. MHD's resume takes the lock the worker takes to pick resumed connections
        // up, which orders the handler thread's write of the answer before the worker's read of it.
        MHD_suspend_connection(connection)
        let suspended = SuspendedRequest(connection: connection, context: context)
        threads.run {
            suspended.context.answer = self.answer(request)
            MHD_resume_connection(suspended.connection)
        }
        return .YES
    }

    /// `response` as the `refused` handler would send it, for a request answered here before any handler.
    /// - Parameter head: the request's head, when it could be made (not for a target that is not one).
    private func refusing(
        _ response: HTTPResponse, head: HTTPRequest?, _ connection: OpaquePointer, method: UnsafePointer<CChar>?
    ) -> HTTPResponse {
        let headers = head?.headers ?? HTTPHeaders(headerFields(connection))
        let name = head?.method.rawValue ?? method.map { String(cString: $0) } ?? ""
        return refused(HTTPServer.Refusal(head: head, method: name, headers: headers, response: response))
    }

    /// `refusing(_:head:_:method:)` for a request whose head has not been made yet: made here if it can be.
    private func refusing(
        _ response: HTTPResponse, _ connection: OpaquePointer, _ context: RequestContext,
        method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?
    ) -> HTTPResponse {
        var head: HTTPRequest?
        if case .made(let made) = makeRequest(connection, context, method: method, version: version, body: []) {
            head = made
        }
        return refusing(response, head: head, connection, method: method)
    }

    /// The request's header fields, as MHD read them.
    private func headerFields(_ connection: OpaquePointer) -> [HTTPHeader] {
        var fields: [HTTPHeader] = []
        _ = withUnsafeMutablePointer(to: &fields) { pointer in
            MHD_get_connection_values_n(connection, .HEADER_KIND, collectHeader, pointer)
        }
        return fields
    }

    /// A request built from what MHD read, or the answer to one that cannot be built.
    enum MadeRequest {
        case made(HTTPRequest)
        case refused(HTTPResponse)
    }

    /// The request MHD has read, with `body`; a 400 when its target is not one.
    private func makeRequest(
        _ connection: OpaquePointer, _ context: RequestContext, method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?, body: [UInt8]
    ) -> MadeRequest {
        guard !context.lineWasCut(method: method, version: version) else {
            return .refused(
                .error(
                    status: .badRequest, code: "invalid_target",
                    message: "the request line holds a byte 0; percent-encode names (and %00 is refused too)"))
        }
        guard let target = context.target else {
            return .refused(
                .error(
                    status: .badRequest, code: "invalid_target",
                    message: "the request target is not UTF-8; percent-encode it"))
        }
        let request: HTTPRequest
        do {
            request = try HTTPRequest(
                method: HTTPMethod(method.map { String(cString: $0) } ?? "GET"), target: target,
                headers: HTTPHeaders(headerFields(connection)), body: body,
                clientAddress: suggest_mhd_client_address(connection).flatMap(SocketAddress.init),
                version: HTTPVersion(parsing: version))
        } catch {
            return .refused(.error(status: .badRequest, code: "invalid_target", message: error.message))
        }
        if let problem = Self.headerProblem(request) {
            return .refused(.error(status: .badRequest, code: "invalid_header", message: problem))
        }
        return .made(request)
    }

    /// Why a request's header fields make it malformed, or `nil`: an HTTP/1.1 request without exactly one `Host`
    /// (RFC 9112, 3.2: a server answers 400), or a field that takes one value given twice (`Host`,
    /// `Content-Type`, `Authorization`), which two readers (a proxy and this server) could each take differently:
    /// the first was taken, where a proxy may have checked the second.
    static func headerProblem(_ request: HTTPRequest) -> String? {
        let hosts = request.headers.values(for: "host").count
        if (request.version.major, request.version.minor) >= (1, 1) && hosts != 1 {
            return "an HTTP/1.1 request carries one Host header field (RFC 9112, 3.2); this one has \(hosts)"
        }
        for name in ["Host", "Content-Type", "Authorization"] {
            let count = request.headers.values(for: name).count
            if count > 1 { return "the header field \(name) is given \(count) times; send it once" }
        }
        return nil
    }

    /// A request has ended, however it ended: its context (a retained `RequestContext`) is let go of, with the body
    /// bytes it held, its connection no longer keeps it as pending, and it leaves the count in flight.
    func endRequest(_ stored: UnsafeMutableRawPointer) {
        let context = Unmanaged<RequestContext>.fromOpaque(stored)
        let request = context.takeUnretainedValue()
        if let connection = request.connection, connection.pendingRequest == stored { connection.pendingRequest = nil }
        request.connection?.clientWait?.bodySince.store(0, ordering: .relaxed)
        request.connection?.clientWait?.since.store(ClientWait.now(), ordering: .relaxed)
        if request.isStreaming { streamingResponses.subtract(1, ordering: .relaxed) }
        release(request)
        context.release()
        inFlight.subtract(1, ordering: .relaxed)
    }

    /// Shuts down the connections whose client is too slow: one that has waited longer than the head timeout for
    /// a request head (trickling it a line at a time, or idle), and one sending a request body at less than
    /// `minimumBodyRate` on average once the head timeout has passed since its head (a byte every few seconds
    /// resets MHD's idle timeout as a header line did). MHD then closes them as it would any that its client
    /// dropped. Called by the acceptor's loop; looks at most once a second.
    func cutSlowClients() {
        guard headTimeoutNanoseconds > 0 else { return }
        let now = ClientWait.now()
        let last = lastClientSweep.load(ordering: .relaxed)
        guard now - last >= 1_000_000_000 else { return }
        lastClientSweep.store(now, ordering: .relaxed)
        let heads = cutHeads(waitingLongerThan: headTimeoutNanoseconds, now: now)
        if heads > 0 {
            log("closed \(heads) connection\(heads == 1 ? "" : "s") that sent no whole request head within the timeout")
        }
        let bodies = cutSlowBodies(now: now)
        if bodies > 0 {
            log(
                "closed \(bodies) connection\(bodies == 1 ? "" : "s") sending a request body slower than "
                    + "\(minimumBodyRate) bytes a second")
        }
        _ = cutAbandonedBodies(olderThan: 1_000_000_000, now: now)
    }

    /// Shuts down the connections whose client went away while the server waited for its request's body. MHD does
    /// not see a close that arrived with the head (the socket stays in CLOSE-WAIT until the timeout), and until the
    /// request ends its declared body counts in the bodies held in memory and a stop waits for it: a client that
    /// sent heads of 32 MiB and left kept every tenant's donations out for 30 s at a time. A body under way for
    /// `age` nanoseconds (a second, or none when the server stops), with nothing left to read and the client's side
    /// closed, will not complete.
    private func cutAbandonedBodies(olderThan age: Int64, now: Int64) -> Int {
        cutConnections { wait in
            let since = wait.bodySince.load(ordering: .relaxed)
            guard since != 0, now - since > age else { return false }
            var byte: UInt8 = 0
            return recv(wait.socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
        }
    }

    /// Shuts down every connection waiting for a request head, or for a body its client has stopped sending, when
    /// the server stops: a head still arriving is no request to let finish (one trickled a line a second held a
    /// stop for its whole grace period).
    func cutWaitingHeads() {
        let now = ClientWait.now()
        _ = cutHeads(waitingLongerThan: -1, now: now)
        _ = cutAbandonedBodies(olderThan: -1, now: now)
    }

    /// Shuts down the connections whose request body, begun more than the head timeout ago, has arrived at less
    /// than `minimumBodyRate` bytes a second since that grace ended.
    /// - Returns: how many.
    private func cutSlowBodies(now: Int64) -> Int {
        guard minimumBodyRate > 0 else { return 0 }
        let grace = headTimeoutNanoseconds
        let rate = Double(minimumBodyRate)
        return cutConnections { wait in
            let since = wait.bodySince.load(ordering: .relaxed)
            guard since != 0, now - since > grace else { return false }
            return Double(wait.bodyBytes.load(ordering: .relaxed)) < rate * Double(now - since - grace) / 1e9
        }
    }

    /// Shuts down the connections that have waited for a head longer than `limit` nanoseconds.
    /// - Returns: how many.
    private func cutHeads(waitingLongerThan limit: Int64, now: Int64) -> Int {
        cutConnections { wait in
            let since = wait.since.load(ordering: .relaxed)
            return since != 0 && now - since > limit
        }
    }

    /// Shuts down the connections whose wait is `overdue`, and marks them as waiting for nothing, so that a later
    /// sweep does not count them again.
    /// - Returns: how many.
    private func cutConnections(where overdue: (ClientWait) -> Bool) -> Int {
        // Under the lock that MHD's close notification takes to remove a wait: a socket is shut down here only
        // while it is still open, never after its number went to another connection.
        clientWaits.withLock { waits in
            var cut = 0
            for wait in waits.values where overdue(wait) {
                wait.since.store(0, ordering: .relaxed)
                wait.bodySince.store(0, ordering: .relaxed)
                _ = shutdown(wait.socket, Int32(SHUT_RDWR))
                cut += 1
            }
            return cut
        }
    }

    /// Lets go of what a request's body held in the count of bodies in memory; when the request ends.
    func release(_ context: RequestContext) {
        if context.heldBodyBytes > 0 { bodyBytesInMemory.subtract(context.heldBodyBytes, ordering: .relaxed) }
        context.heldBodyBytes = 0
    }

    /// Runs the handler on this thread. A response to HEAD ends a streamed body unread and carries an empty one, so
    /// that its head is GET's (chunked, no `Content-Length: 0`), on a connection that closes after it: MHD 0.9.75
    /// sends the last chunk even after the head of a HEAD, where the connection's next response would belong.
    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        pthread_setspecific(insideHandler, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(insideHandler, nil) }
        var response = handler(request)
        if request.method == .head, let streamed = response.streamedBody {
            streamed.end()
            response.streamedBody = .empty()
            response.headers.set(name: "Connection", value: "close")
        }
        return response
    }

    /// A suspended connection and its request's context, handed to a handler thread: only that thread touches
    /// them until it resumes the connection.
    private struct SuspendedRequest: @unchecked Sendable {
        let connection: OpaquePointer
        let context: RequestContext
    }

    /// Hands `response` to MHD, which copies the body (or reads a streamed one as the connection takes it); a
    /// response MHD refuses becomes a 500. A streamed body counts in `streamingResponses` until `context` ends.
    private func queue(
        _ response: HTTPResponse, on connection: OpaquePointer, for context: RequestContext? = nil
    ) -> MHD_Result {
        if let problem = ServerCore.problem(with: response) {
            response.streamedBody?.end()
            log("answered 500 instead of the handler's response: \(problem); fix the handler")
            return queue(
                .error(status: .internalServerError, code: "internal", message: "the server could not answer"),
                on: connection)
        }
        let made: OpaquePointer?
        if let streamed = response.streamedBody {
            streamed.attach(log: log)
            // MHD holds a reference until it lets the response go (`mhdEndStreamedBody`), which ends the body.
            let retained = Unmanaged.passRetained(streamed).toOpaque()
            made = MHD_create_response_from_callback(
                UInt64.max, ServerCore.streamedBlockSize, mhdReadStreamedBody, retained, mhdEndStreamedBody)
            if made == nil { Unmanaged<StreamedBody>.fromOpaque(retained).release() }
        } else {
            made = response.body.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(
                    bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
            }
        }
        guard let made else {
            response.streamedBody?.end()
            log("cannot make a response: out of memory; the connection is closed")
            return .NO
        }
        defer { MHD_destroy_response(made) }
        for field in response.headers {
            let added = field.name.withCString { name in
                field.value.withCString { value in MHD_add_response_header(made, name, value) }
            }
            guard added == .YES else {
                log(
                    "answered 500 instead of the handler's response: MHD refused its header field \(field.name) "
                        + "(Content-Length and Transfer-Encoding are MHD's to set); fix the handler")
                return queue(
                    .error(status: .internalServerError, code: "internal", message: "the server could not answer"),
                    on: connection)
            }
        }
        if draining.load(ordering: .relaxed) {
            _ = MHD_add_response_header(made, "Connection", "close")
        }
        let queued = MHD_queue_response(connection, UInt32(response.status.code), made)
        if queued == .YES, response.streamedBody != nil {
            // The kernel's send queue takes megabytes; to a client with a small receive window it drains so slowly
            // that the socket is not writable again for longer than the idle timeout, and MHD closed a connection
            // still being read, its body cut short. A streamed body has a deadline of its own (its producer's).
            _ = suggest_mhd_set_connection_timeout(connection, streamedBodyTimeoutSeconds)
            if let context {
                context.isStreaming = true
                streamingResponses.add(1, ordering: .relaxed)
            }
        }
        return queued
    }

    /// The most a streamed body is asked for at once: MHD's buffer for it.
    static let streamedBlockSize = 64 * 1024

    /// Why MHD could not send `response` as it is, or `nil` when it can.
    private static func problem(with response: HTTPResponse) -> String? {
        guard (200...999).contains(response.status.code) else {
            return "status \(response.status.code) is not a final status (200 to 999)"
        }
        if response.streamedBody != nil && !response.body.isEmpty {
            return "it has both a body and a streamed body"
        }
        for field in response.headers {
            var name = field.name
            let nameIsToken = name.withUTF8 { bytes in
                !bytes.isEmpty && !bytes.contains { $0 <= 32 || $0 == 58 || $0 >= 127 }
            }
            if !nameIsToken { return "header field name \"\(field.name)\" is not a token" }
            var value = field.value
            // MHD 0.9.75 refuses an empty value; a NUL would cut the value short in C.
            let valueIsSendable = value.withUTF8 { bytes in
                !bytes.isEmpty && !bytes.contains { $0 == 0 || $0 == 10 || $0 == 13 }
            }
            if !valueIsSendable { return "header field \(field.name) has an empty value or a NUL, CR or LF in it" }
        }
        return nil
    }

    /// The 413 for a body over the limit.
    private func bodyTooLarge() -> HTTPResponse {
        closing(
            .error(
                status: .contentTooLarge, code: "body_too_large",
                message: "the request body is over the limit of \(maximumBodySize) bytes; send a smaller body"))
    }

    /// The 503 for a body that does not fit beside the bodies held now (of `declared` bytes, or chunked); counted
    /// and logged, since it never reaches the handler.
    private func busy(declared: Int?) -> HTTPResponse {
        bodiesRefusedForMemory.add(1, ordering: .relaxed)
        if let declared {
            log("a declared body of \(declared) bytes would take the bodies held at once past \(bodyBytesInMemoryLimit) bytes: answered 503")
        }
        var response = HTTPResponse.error(
            status: .serviceUnavailable, code: "busy",
            message: "the server holds as many request bodies as it may (\(bodyBytesInMemoryLimit) bytes); "
                + "send again in a moment")
        response.headers.append(name: "Retry-After", value: "1")
        return response
    }

    /// Whether the request asks for `100 Continue` before it sends its body.
    private func expectsContinue(_ connection: OpaquePointer) -> Bool {
        guard let value = lookUp("Expect", on: connection) else { return false }
        return String(cString: value).lowercased().contains("100-continue")
    }

    /// `response`, saying that the connection closes after it (as MHD closes it after a body it did not read).
    private func closing(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.append(name: "Connection", value: "close")
        return response
    }

    /// Answers a body that is being read with `response` (status line `statusLine`), then lets MHD close the
    /// connection.
    ///
    /// MHD accepts a response only before the body or after all of it, and reading an endless body to its end is
    /// what the limits are there to prevent. So the answer is written to the socket here, in one non-blocking send
    /// (a connection still reading its request has nothing else queued), and the handler returns `.NO`, on which
    /// MHD closes the connection. A client that is still sending may see the close before it reads the answer.
    private func refuseStreamedBody(
        _ response: HTTPResponse, statusLine: String, reason: String, on connection: OpaquePointer
    ) {
        var head = "HTTP/1.1 \(statusLine)\r\n"
        for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
        var bytes = Array(
            (head + "Content-Length: \(response.body.count)\r\n\r\n").utf8)
        bytes += response.body
        let socket = suggest_mhd_connection_socket(connection)
        var sent = -1
        if socket >= 0 {
            sent = bytes.withUnsafeBytes { raw in
                send(socket, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
        }
        let outcome = sent == bytes.count ? "answered \(statusLine)" : "could not send the \(statusLine)"
        log("\(reason): \(outcome), closing the connection")
    }

    /// Why the request's body has no single length, if it has none: a field name that is not a token (it may hide
    /// a framing field), several `Content-Length` fields (MHD would take the first), or one beside
    /// `Transfer-Encoding` (RFC 9112, 6.3: a request a server may reject, and should when it cannot be sure every
    /// hop framed it alike), or a transfer coding other than `chunked` alone, which MHD cannot delimit.
    /// - Returns: the error's code (`invalid_header` for a field name, else `ambiguous_length`) and its message.
    private func framingAmbiguity(_ connection: OpaquePointer) -> (code: String, message: String)? {
        var counts = FramingFields()
        _ = withUnsafeMutablePointer(to: &counts) { pointer in
            MHD_get_connection_values_n(connection, .HEADER_KIND, countFramingField, pointer)
        }
        // MHD 0.9.75 joins a folded line to the field's *name*: `Content-Length: 24` then ` 0` became a field
        // `Content-Length0`, the body was read as the next request (a `DELETE` smuggled in it ran), and a folded
        // `Authorization` put the key into the name, which the message below showed. RFC 9112, 5.2: refuse.
        if counts.folded {
            return (
                "invalid_header",
                "a header field is folded onto a line that begins with a space or a tab; send each field on one line"
            )
        }
        // `Transfer-Encoding : chunked` (a space before the colon) reached the handler as a field MHD never framed
        // by, so its chunks were read as the next request: RFC 9112, 5.1, says to refuse such a request. The name
        // is not shown: a malformed one may hold a key.
        if counts.malformedName {
            return (
                "invalid_header",
                "a header field name holds a character a field name may not have (a space before the colon?)"
            )
        }
        let code = "ambiguous_length"
        if counts.contentLengths > 1 {
            return (code, "the request has \(counts.contentLengths) Content-Length fields; send one")
        }
        if counts.contentLengths > 0 && counts.transferEncodings > 0 {
            return (code, "the request has both Content-Length and Transfer-Encoding; send one")
        }
        if counts.transferEncodings > 1 {
            return (code, "the request has \(counts.transferEncodings) Transfer-Encoding fields; send one")
        }
        // MHD frames a body by chunks only for exactly `chunked`; any other coding (`gzip, chunked`, `identity`)
        // left it waiting for a body it could not delimit until the connection's timeout.
        if let coding = lookUp("Transfer-Encoding", on: connection), !ServerCore.isChunkedAlone(coding) {
            return (
                code,
                "Transfer-Encoding \(String(String(cString: coding).prefix(40))) is not supported: send the body "
                    + "with Content-Length or Transfer-Encoding: chunked alone"
            )
        }
        return nil
    }

    /// Whether a `Transfer-Encoding` value is `chunked` as MHD reads it: that word in any ASCII case after leading
    /// spaces or tabs, and nothing else (a trailing space is not MHD's `chunked`).
    static func isChunkedAlone(_ value: UnsafePointer<CChar>) -> Bool {
        var start = value
        while start.pointee == 32 || start.pointee == 9 { start += 1 }
        return strcasecmp(start, "chunked") == 0
    }

    /// The declared `Content-Length`, 0 without one, `Int.max` past `Int.max` (MHD has refused a malformed one).
    private func declaredLength(_ connection: OpaquePointer) -> Int {
        guard let text = lookUp("Content-Length", on: connection) else { return 0 }
        var value = 0
        var index = 0
        while text[index] != 0 {
            let digit = Int(text[index]) - 48
            guard (0...9).contains(digit) else { return value }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(digit)
            if overflowTimes || overflowSum { return Int.max }
            value = sum
            index += 1
        }
        return value
    }

    private func lookUp(_ name: StaticString, on connection: OpaquePointer) -> UnsafePointer<CChar>? {
        name.withUTF8Buffer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                MHD_lookup_connection_value(connection, .HEADER_KIND, chars.baseAddress)
            }
        }
    }
}

/// Per request: the raw target from MHD's URI callback and the body as it arrives. Only the thread that owns the
/// request's connection touches it (MHD runs each connection on one worker).
final class RequestContext {
    /// The target as sent, or `nil` when it is not UTF-8.
    let target: String?
    /// Where the target starts in MHD's buffer of the connection, and its length as a C string, for
    /// `lineWasCut(method:version:)`.
    private let targetStart: UnsafeRawPointer?
    private let targetLength: Int
    var headersSeen = false
    var body: [UInt8] = []
    /// The bytes counted for this request in `ServerCore.bodyBytesInMemory` (its declared length, or what has
    /// arrived of a chunked body), until the request ends.
    var heldBodyBytes = 0
    /// The answer of a request refused when its head arrived, sent once its body has arrived (and been dropped).
    var refusal: HTTPResponse?
    /// A request with a body as it was built when its head arrived (for `screen`), given its body once that has
    /// arrived instead of being built again.
    var head: HTTPRequest?
    /// The response of a handler that ran on a handler thread, until it is queued.
    var answer: HTTPResponse?
    /// Whether its response, queued, has a streamed body (counted in `ServerCore.streamingResponses`).
    var isStreaming = false
    /// Its connection's context, which keeps this request as pending until it ends (`ServerCore.endRequest`).
    let connection: ConnectionContext?

    /// - Parameters:
    ///   - uri: the request target as MHD passes it to its URI callback, in its buffer of the connection.
    init(uri: UnsafePointer<CChar>?, connection: ConnectionContext?) {
        target = uri.flatMap { String(validatingCString: $0) }
        targetStart = uri.map(UnsafeRawPointer.init)
        targetLength = uri.map { strlen($0) } ?? 0
        self.connection = connection
    }

    /// Whether a byte 0 in the request line cut the method or the target MHD passed short:
    /// `DELETE .../conversations/c1<NUL>/block` reached the route that deletes conversation `c1`,
    /// `/v1/accounts/team<NUL>/...` the deletion of the account, and `DELETE<NUL>junk` (a method no proxy in front
    /// knows) a `DELETE`. MHD 0.9.75 finds the line's end by its CRLF, not by a NUL, and passes the method, the
    /// target and the version as C strings, in that order, where it read them in the connection's buffer (it ends
    /// each where the space after it was, and keeps them there until the request ends). So the method's C string
    /// must end at the spaces before the target, and the target's at the byte before the version.
    func lineWasCut(method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) -> Bool {
        guard let targetStart, let version else { return false }
        let afterTarget = UnsafeRawPointer(version) - targetStart
        if afterTarget > 0 && afterTarget != targetLength + 1 { return true }
        guard let method, UnsafeRawPointer(method) < targetStart else { return false }
        // The method's end, then the spaces MHD skipped before the target, the first of them written over with 0.
        var byte = UnsafeRawPointer(method) + strlen(method) + 1
        while byte < targetStart {
            guard byte.load(as: UInt8.self) == UInt8(ascii: " ") else { return true }
            byte += 1
        }
        return false
    }
}

/// What is kept of one connection (MHD's socket context): its request whose line has arrived and that has not
/// ended. On some of the paths where MHD gives a request up before the access handler sees it (a head larger than
/// the connection's memory: a thousand query items, a thousand header lines, whose error response MHD cannot
/// build either), it closes the connection without the completion callback; the request is let go of when its
/// connection closes, or its context would stay allocated and counted in flight, and every drain would wait its
/// whole grace for it.
final class ConnectionContext {
    var pendingRequest: UnsafeMutableRawPointer?
    /// Its wait for a request head, registered in `ServerCore.clientWaits` while the connection is open.
    var clientWait: ClientWait?
}

/// One connection's wait for what its client must send: since when it waits for a request head (0 while a
/// request is under way), and since when it receives a request body and how much has come. Read by the acceptor's
/// thread (`ServerCore.cutSlowClients()`), written by the connection's worker.
final class ClientWait: Sendable {
    let socket: Int32
    /// Nanoseconds of the monotonic clock; 0 when the connection is not waiting for a head.
    let since = Atomic<Int64>(0)
    /// When the request's head arrived, if a body follows it: nanoseconds of the monotonic clock; 0 when no body
    /// is arriving.
    let bodySince = Atomic<Int64>(0)
    /// The body's bytes received so far.
    let bodyBytes = Atomic<Int>(0)

    init(socket: Int32) {
        self.socket = socket
        since.store(Self.now(), ordering: .relaxed)
    }

    /// A body follows the head that has just arrived.
    func startBody() {
        bodyBytes.store(0, ordering: .relaxed)
        bodySince.store(Self.now(), ordering: .relaxed)
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

/// MHD's URI callback: a request line has arrived. Its result is the request's context pointer.
func mhdRequestStarted(
    _ closure: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let closure else { return nil }
    ServerCore.from(closure).inFlight.add(1, ordering: .relaxed)
    let connectionContext = connection.flatMap(suggest_mhd_socket_context).map {
        Unmanaged<ConnectionContext>.fromOpaque($0).takeUnretainedValue()
    }
    let context = Unmanaged.passRetained(RequestContext(uri: uri, connection: connectionContext)).toOpaque()
    if let uri { skipMHDQueryParsing(uri) }
    connectionContext?.pendingRequest = context
    return context
}

/// Keeps MHD from reading the query into its own list of arguments, which nothing here reads (`RequestTarget`
/// parses the target this callback copied): each argument takes room in the connection's memory, and about a
/// thousand of them (a 3 KB target) ran it out, where MHD 0.9.75 could not send its own 431 either and left the
/// client waiting for the connection's timeout. MHD has found the first `?` of the target before this callback,
/// and reads the arguments from the byte after it once the callback returns; that byte becomes the end of the
/// string, in MHD's buffer of the connection (writable: MHD itself ends the path there), so that it reads none.
///
/// MHD looked for the `?` over the target's whole length, past a byte 0 in it (a target this server then refuses),
/// so the search here goes past one too, up to the target's end: a 0 followed by the HTTP version (`HTTP/d.d`,
/// which MHD has checked) and the 0 that ends the line. Every byte read is in the request line.
private func skipMHDQueryParsing(_ uri: UnsafePointer<CChar>) {
    let question = UInt8(ascii: "?")
    var byte = UnsafeMutableRawPointer(mutating: uri)
    while true {
        let value = byte.load(as: UInt8.self)
        if value == question {
            if byte.load(fromByteOffset: 1, as: UInt8.self) != 0 { byte.storeBytes(of: 0, toByteOffset: 1, as: UInt8.self) }
            return
        }
        if value == 0 && versionFollows(byte) { return }
        byte += 1
    }
}

/// Whether the byte 0 at `end` is the end of the target: `HTTP/d.d` and a 0 follow it. Asked at least once a
/// request (where its target ends), so without an allocation.
private func versionFollows(_ end: UnsafeMutableRawPointer) -> Bool {
    func byte(_ offset: Int) -> UInt8 { end.load(fromByteOffset: offset, as: UInt8.self) }
    func isDigit(_ value: UInt8) -> Bool { value >= 0x30 && value <= 0x39 }
    return byte(1) == UInt8(ascii: "H") && byte(2) == UInt8(ascii: "T") && byte(3) == UInt8(ascii: "T")
        && byte(4) == UInt8(ascii: "P") && byte(5) == UInt8(ascii: "/") && isDigit(byte(6))
        && byte(7) == UInt8(ascii: ".") && isDigit(byte(8)) && byte(9) == 0
}

/// MHD's access handler.
func mhdAccess(
    _ closure: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ upload: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?, _ contextPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let closure, let connection, let uploadSize, let stored = contextPointer?.pointee else { return .NO }
    let context = Unmanaged<RequestContext>.fromOpaque(stored).takeUnretainedValue()
    return ServerCore.from(closure).handle(
        connection, context, method: method, version: version, upload: upload, uploadSize: uploadSize)
}

/// MHD's completion callback: the request has ended, however it ended.
func mhdRequestEnded(
    _ closure: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ contextPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let closure, let contextPointer, let stored = contextPointer.pointee else { return }
    contextPointer.pointee = nil
    ServerCore.from(closure).endRequest(stored)
}

/// MHD's connection notification: a connection it was handed has started or closed.
func mhdConnectionChanged(
    _ closure: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ change: MHD_ConnectionNotificationCode
) {
    guard let closure, let socketContext else { return }
    switch change {
    case .CONNECTION_NOTIFY_STARTED:
        let core = ServerCore.from(closure)
        let connectionContext = ConnectionContext()
        if core.headTimeoutNanoseconds > 0, let connection {
            let socket = suggest_mhd_connection_socket(connection)
            if socket >= 0 {
                let wait = ClientWait(socket: socket)
                core.clientWaits.withLock { $0[ObjectIdentifier(wait)] = wait }
                connectionContext.clientWait = wait
            }
        }
        socketContext.pointee = Unmanaged.passRetained(connectionContext).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        let core = ServerCore.from(closure)
        if let kept = socketContext.pointee {
            socketContext.pointee = nil
            let connectionContext = Unmanaged<ConnectionContext>.fromOpaque(kept).takeRetainedValue()
            // Before MHD closes the socket (it notifies first): the sweep never shuts a number down once it is free.
            if let wait = connectionContext.clientWait {
                _ = core.clientWaits.withLock { $0.removeValue(forKey: ObjectIdentifier(wait)) }
            }
            if let abandoned = connectionContext.pendingRequest { core.endRequest(abandoned) }
        }
        core.openConnections.subtract(1, ordering: .acquiringAndReleasing)
    default:
        break
    }
}

/// MHD's error log: one formatted line to the caller's log handler.
func mhdLog(_ closure: UnsafeMutableRawPointer?, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?) {
    guard let closure, let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 1024)
    let length = Int(vsnprintf(&buffer, buffer.count, format, arguments))
    guard length >= 0 else { return }
    var bytes = buffer.prefix(min(length, buffer.count - 1)).map { UInt8(bitPattern: $0) }
    while let last = bytes.last, last == 10 || last == 13 || last == 32 { bytes.removeLast() }
    let line = String(decoding: bytes, as: UTF8.self)
    // The handler returns MHD_NO only after logging why; MHD's generic line for it would say the same, wrongly.
    if line.hasPrefix("Application reported internal error") { return }
    ServerCore.from(closure).log(line)
}

/// How many fields of a request's head say how long its body is.
private struct FramingFields {
    var contentLengths = 0
    var transferEncodings = 0
    /// Whether a field name has a byte a name may not hold (RFC 9110's `tchar`), as MHD passed it.
    var malformedName = false
    /// Whether a field was folded onto a next line (`valueFollowsName`).
    var folded = false
}

/// Whether a field's value follows its name on the line MHD read them from: the name, the NUL MHD wrote over the
/// colon, only spaces or tabs, then the value. MHD 0.9.75 reads the head in place in the connection's buffer and
/// keeps the lines there; it joins a line that begins with a space or a tab (an obsolete line folding, RFC 9112,
/// 5.2) to the *name* of the field before it, in a block of its own, so a folded field's name no longer sits before
/// its value. (Looking past the value instead missed a fold behind a NUL in the value, which MHD ends the value at,
/// and took a body after bare LFs for a fold.)
private func valueFollowsName(key: UnsafePointer<CChar>, keySize: Int, value: UnsafePointer<CChar>) -> Bool {
    let colon = UnsafeRawPointer(key) + keySize
    let start = UnsafeRawPointer(value)
    // Beyond a head's largest size the two are in different blocks, whatever lies between them.
    guard start > colon, start - colon <= 16 << 20, colon.load(as: UInt8.self) == 0 else { return false }
    var byte = colon + 1
    while byte < start {
        let next = byte.load(as: UInt8.self)
        guard next == 32 || next == 9 else { return false }
        byte += 1
    }
    return true
}

/// MHD's iterator over a request's head fields, counting the framing ones into a `FramingFields`.
private func countFramingField(
    _ counts: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let counts, let key else { return .YES }
    let fields = counts.assumingMemoryBound(to: FramingFields.self)
    let name = UnsafeRawBufferPointer(start: key, count: keySize)
    if name.isEmpty || !name.allSatisfy(HTTPToken.allows) { fields.pointee.malformedName = true }
    if let value, !valueFollowsName(key: key, keySize: keySize, value: value) { fields.pointee.folded = true }
    if keySize == 14 && strncasecmp(key, "Content-Length", 14) == 0 {
        fields.pointee.contentLengths += 1
    } else if keySize == 17 && strncasecmp(key, "Transfer-Encoding", 17) == 0 {
        fields.pointee.transferEncodings += 1
    }
    return .YES
}

/// Collects one header field for `HTTPRequest.headers`.
private func collectHeader(
    _ fields: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let fields, let key else { return .YES }
    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
    var text = ""
    if let value {
        // MHD drops the whitespace before a value but keeps what follows it, which is not part of the value.
        var bytes = UnsafeRawBufferPointer(start: value, count: valueSize)
        while let last = bytes.last, last == 32 || last == 9 {
            bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast())
        }
        text = String(decoding: bytes, as: UTF8.self)
    }
    fields.assumingMemoryBound(to: [HTTPHeader].self).pointee.append(HTTPHeader(name: name, value: text))
    return .YES
}
