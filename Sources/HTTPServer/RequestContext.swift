import CSystem

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
    /// The status and `X-Request-Id` of the handler's response once MHD has taken it: what the access log said of
    /// the request, which the log corrects when the response is not sent whole (`ServerCore.endRequest`).
    var queuedAnswer: (status: Int, requestID: String?)?
    /// The streamed body of that response, if it has one: one the server ended itself is not the client's doing.
    var queuedStreamedBody: StreamedBody?
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
