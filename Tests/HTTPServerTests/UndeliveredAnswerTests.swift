import HTTPServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The access log's line for a request is written when its response is made, with its status; a response that is
/// then not sent whole (the client gone) gets a line of its own, under the same request id, so that a 201 in the
/// log is not taken for a donation its client was told of.
@Suite struct UndeliveredAnswerTests {
    /// A handler that answers 201 with a body of `bytes` under the request id `requestID`.
    static func created(bytes: Int, requestID: String) -> HTTPServer.Handler {
        { _ in
            var response = HTTPResponse.text(String(repeating: "x", count: bytes), status: .created)
            response.headers.set(name: "X-Request-Id", value: requestID)
            return response
        }
    }

    /// A body larger than the sockets' buffers, to a client that closes without reading it: the server's sending
    /// meets the client's reset.
    @Test func aResponseItsClientDidNotTakeIsLoggedUnderItsRequestID() throws {
        let log = LogLines()
        try withServer(log: log, handler: Self.created(bytes: 16 << 20, requestID: "r-gone")) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            var byte: UInt8 = 0
            #expect(recv(connection.descriptor, &byte, 1, 0) == 1)
            connection.close()
            #expect(eventually { log.contains("the 201 response to request r-gone was not sent whole") })
            let line = log.all.first { $0.contains("r-gone") } ?? ""
            #expect(line.contains("the client went away") || line.contains("sending it failed"), "\(line)")
        }
    }

    /// A streamed body the server ended itself (its producer failed; an export past its time limit is cut off the
    /// same way) is said to be the server's doing, after the line that says why: it was blamed on the client.
    @Test func aBodyTheServerEndedIsNotBlamedOnTheClient() throws {
        struct Failed: Error {}
        let log = LogLines()
        let handler: HTTPServer.Handler = { _ in
            let calls = CallCounter()
            let body = StreamedBody(
                produce: { output in
                    calls.increment()
                    if calls.count > 1 { throw Failed() }
                    output += [UInt8](repeating: 0x61, count: 64 << 10)
                    return false
                }, end: {})
            do { try body.start() } catch { return .text("start failed", status: .internalServerError) }
            var response = HTTPResponse(streamedBody: body)
            response.headers.set(name: "X-Request-Id", value: "r-ended")
            return response
        }
        try withServer(log: log, handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("GET /ends HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(eventually { log.contains("the 200 response to request r-ended was not sent whole") })
            let line = log.all.first { $0.contains("r-ended") } ?? ""
            #expect(line.contains("the server ended its body"), "\(line)")
            connection.close()
        }
    }

    @Test func aResponseSentWholeAddsNoLine() throws {
        let log = LogLines()
        try withServer(log: log, handler: Self.created(bytes: 1 << 20, requestID: "r-kept")) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let response = try connection.exchange("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(response.status == 201 && response.body.count == 1 << 20)
            connection.close()
            usleep(200_000)
        }
        #expect(!log.contains("not sent whole"), "\(log.all)")
    }
}
