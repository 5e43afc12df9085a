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
    /// Room past `bodyBytesInMemoryLimit` that only small bodies (`smallBodyBytes` or less: declared so, or chunked
    /// while they stay so) may take: an eighth of the limit. Large bodies sent slowly (1,024 bytes a second keeps a
    /// body of 32 MiB going for nine hours) could otherwise hold the whole limit, and refuse every other client's
    /// donation meanwhile.
    var smallBodyReserve: Int { min(bodyBytesInMemoryLimit / 8, Int.max - bodyBytesInMemoryLimit) }
    /// The largest body that may take `smallBodyReserve`: a 64th of the limit, and at most 1 MiB (a donation's
    /// limit), so that the reserve holds at least eight of them.
    var smallBodyBytes: Int { min(1 << 20, bodyBytesInMemoryLimit / 64) }
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
    let lastClientSweep = Atomic<Int64>(0)

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
            case .refused(let answer, let head): refusal = refusing(answer, head: head, connection, method: method)
            case .made(let head):
                context.head = head
                // Counted and logged by the screen itself when it refuses.
                refusal = screen(head)
            }
            // A declared body is counted whole as its head arrives, so that bodies whose heads arrive together
            // cannot all pass and then cross; a chunked one as its pieces arrive.
            if refusal == nil && !chunked {
                if !holdBodyBytes(declared, ofABodyOf: declared) {
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
                if !holdBodyBytes(uncounted, ofABodyOf: context.body.count + size) {
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
            case .refused(let refusal, let head):
                return queue(refusing(refusal, head: head, connection, method: method), on: connection)
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

    /// A request built from what MHD read, or the answer to one that cannot be built.
    enum MadeRequest {
        case made(HTTPRequest)
        /// With the request when only its header fields are refused: its target still names a route, for the
        /// access log and the metrics.
        case refused(HTTPResponse, head: HTTPRequest? = nil)
    }

    /// The request MHD has read, with `body`; a 400 when its target is not one.
    func makeRequest(
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
            return .refused(.error(status: .badRequest, code: "invalid_header", message: problem), head: request)
        }
        return .made(request)
    }

    /// A request has ended, however it ended: its context (a retained `RequestContext`) is let go of, with the body
    /// bytes it held, its connection no longer keeps it as pending, and it leaves the count in flight.
    /// - Parameter reason: how MHD says the request ended; `nil` when its connection closed without MHD's word.
    func endRequest(_ stored: UnsafeMutableRawPointer, reason: MHD_RequestTerminationCode?) {
        let context = Unmanaged<RequestContext>.fromOpaque(stored)
        let request = context.takeUnretainedValue()
        if let answer = request.queuedAnswer, reason != .REQUEST_TERMINATED_COMPLETED_OK {
            let endedByTheServer = request.queuedStreamedBody?.wasEndedByTheServer ?? false
            log(Self.undeliveredAnswer(answer, reason: reason, endedByTheServer: endedByTheServer))
        }
        request.queuedStreamedBody = nil
        if let connection = request.connection, connection.pendingRequest == stored { connection.pendingRequest = nil }
        request.connection?.clientWait?.bodySince.store(0, ordering: .relaxed)
        request.connection?.clientWait?.since.store(ClientWait.now(), ordering: .relaxed)
        if request.isStreaming { streamingResponses.subtract(1, ordering: .relaxed) }
        release(request)
        context.release()
        inFlight.subtract(1, ordering: .relaxed)
    }

    /// The log's line for a handler's response that was not sent whole: the access log's line for the request,
    /// written when the response was made, gives its status all the same, and for a donation's 201 the client may
    /// not know that it was recorded (it may retry: a donation with its `identifier` is then a duplicate).
    static func undeliveredAnswer(
        _ answer: (status: Int, requestID: String?), reason: MHD_RequestTerminationCode?, endedByTheServer: Bool = false
    ) -> String {
        let why: String
        switch reason {
        case _ where endedByTheServer: why = "the server ended its body (the line before says why)"
        case .REQUEST_TERMINATED_TIMEOUT_REACHED?: why = "the connection timed out"
        case .REQUEST_TERMINATED_DAEMON_SHUTDOWN?: why = "the server stopped"
        case .REQUEST_TERMINATED_CLIENT_ABORT?, .REQUEST_TERMINATED_READ_ERROR?: why = "the client went away"
        case .REQUEST_TERMINATED_WITH_ERROR?: why = "sending it failed (the client went away, or the network)"
        default: why = "the connection closed first"
        }
        let request = answer.requestID.map { "request \($0)" } ?? "a request"
        return "the \(answer.status) response to \(request) was not sent whole: \(why); the client may not have it"
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
                on: connection, for: context)
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
                    on: connection, for: context)
            }
        }
        if draining.load(ordering: .relaxed) {
            _ = MHD_add_response_header(made, "Connection", "close")
        }
        let queued = MHD_queue_response(connection, UInt32(response.status.code), made)
        if queued == .YES {
            context?.queuedAnswer = (response.status.code, response.headers["X-Request-Id"])
            context?.queuedStreamedBody = response.streamedBody
        }
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
}
