import CMicroHTTPD
import Synchronization

/// The answers a request gets before any handler sees it: too large, too many bodies held, a body refused as it
/// streams, and the `refused` handler's say in each.
extension ServerCore {
    /// `response` as the `refused` handler would send it, for a request answered here before any handler.
    /// - Parameter head: the request's head, when it could be made (not for a target that is not one).
    func refusing(
        _ response: HTTPResponse, head: HTTPRequest?, _ connection: OpaquePointer, method: UnsafePointer<CChar>?
    ) -> HTTPResponse {
        let headers = head?.headers ?? HTTPHeaders(headerFields(connection))
        let name = head?.method.rawValue ?? method.map { String(cString: $0) } ?? ""
        return refused(HTTPServer.Refusal(head: head, method: name, headers: headers, response: response))
    }

    /// `refusing(_:head:_:method:)` for a request whose head has not been made yet: made here if it can be.
    func refusing(
        _ response: HTTPResponse, _ connection: OpaquePointer, _ context: RequestContext,
        method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?
    ) -> HTTPResponse {
        var head: HTTPRequest?
        switch makeRequest(connection, context, method: method, version: version, body: []) {
        case .made(let made), .refused(_, head: .some(let made)): head = made
        case .refused: break
        }
        return refusing(response, head: head, connection, method: method)
    }

    /// Why MHD could not send `response` as it is, or `nil` when it can.
    static func problem(with response: HTTPResponse) -> String? {
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
    func bodyTooLarge() -> HTTPResponse {
        closing(
            .error(
                status: .contentTooLarge, code: "body_too_large",
                message: "the request body is over the limit of \(maximumBodySize) bytes; send a smaller body"))
    }

    /// Counts `bytes` more of request bodies held, for a body of `bodySize` bytes (declared, or read so far): they
    /// must fit within `bodyBytesInMemoryLimit`, or with `smallBodyReserve` for a small body.
    /// - Returns: `false`, having counted nothing, when they do not fit.
    func holdBodyBytes(_ bytes: Int, ofABodyOf bodySize: Int) -> Bool {
        let ceiling = bodyBytesInMemoryLimit + (bodySize <= smallBodyBytes ? smallBodyReserve : 0)
        guard bodyBytesInMemory.add(bytes, ordering: .relaxed).newValue > ceiling else { return true }
        bodyBytesInMemory.subtract(bytes, ordering: .relaxed)
        return false
    }

    /// The 503 for a body that does not fit beside the bodies held now (of `declared` bytes, or chunked); counted
    /// and logged, since it never reaches the handler.
    func busy(declared: Int?) -> HTTPResponse {
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

    /// `response`, saying that the connection closes after it (as MHD closes it after a body it did not read).
    func closing(_ response: HTTPResponse) -> HTTPResponse {
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
    func refuseStreamedBody(
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
}
