import HTTPServer
import SuggestTestSupport
import Testing

/// Request bodies (declared and chunked), the body limit, and responses the handler gets wrong.
@Suite struct BodyTests {
    @Test(arguments: [0, 1, 4096, 300_000])
    func aDeclaredBodyArrivesWhole(size: Int) throws {
        let body = randomBytes(size, seed: 0x5EED_0000 + UInt64(size))
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: \(size)\r\n\r\n")
            try connection.send(body)
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(echoed("body", in: response) == ["\(size) \(fnv1a(body))"])
            // The connection stays usable after a body.
            let next = try connection.exchange("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(echoed("path", in: next) == ["/after"])
        }
    }

    /// A transfer coding other than `chunked` alone is refused when the head arrives: MHD could not delimit the
    /// body, and the request waited for the connection's timeout. `chunked` in any case is taken.
    @Test(arguments: ["gzip, chunked", "chunked, gzip", "identity", "chunked;x=1", "chunked ", "chunked\t", "chun ked"])
    func aTransferCodingOtherThanChunkedIsRefusedAtOnce(coding: String) throws {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port, timeout: 5)
            let response = try connection.exchange(
                "POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(coding)\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
            #expect(response.status == 400)
            #expect(response.text.contains(#""code":"ambiguous_length""#) && response.text.contains("is not supported"), "\(response)")
            #expect(response.header("Connection")?.lowercased() == "close")
            let chunked = try TestConnection.connected(port: server.address.port, timeout: 5)
            let taken = try chunked.exchange(
                "POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
            #expect(echoed("body", in: taken) == ["3 \(fnv1a(Array("abc".utf8)))"])
        }
    }

    /// A space before a field's colon (`Transfer-Encoding : chunked`) made a field MHD does not frame by: the chunks
    /// were read as the next request (request smuggling behind a lenient proxy). RFC 9112, 5.1: refused, as is any
    /// field name that is not a token.
    @Test(arguments: ["Transfer-Encoding : chunked", "Content-Length\t: 3", "X Odd: 1", "X-\u{1}: 1"])
    func aFieldNameThatIsNotATokenIsRefused(field: String) throws {
        try Self.expectInvalidHeader("\(field)\r\nContent-Length: 3\r\n\r\nabc", saying: "field name")
    }

    /// Sends `POST /t` with `head` after its `Host` field to a server of its own, and checks that it is refused as
    /// an invalid header: 400 `invalid_header` with `words` in its message, the connection closed.
    /// - Returns: the response, for what a test checks beside.
    @discardableResult
    static func expectInvalidHeader(_ head: String, saying words: String) throws -> WireResponse {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port, timeout: 5)
            let response = try connection.exchange("POST /t HTTP/1.1\r\nHost: x\r\n" + head)
            #expect(response.status == 400, "\(response)")
            #expect(response.text.contains(#""code":"invalid_header""#) && response.text.contains(words), "\(response)")
            #expect(response.header("Connection")?.lowercased() == "close")
            return response
        }
    }

    /// A field folded onto a second line (RFC 9112, 5.2) is refused, wherever it is: MHD 0.9.75 joined the
    /// continuation to the field's name, so `Content-Length: 24` then ` 0` framed no body and the body ran as the
    /// next request, and a folded key was shown back in the error about the name.
    @Test(arguments: [
        "Content-Length: 24\r\n 0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
        "Content-Length:\r\n 24\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
        "Content-Length: 3\r\nTransfer-Encoding:\r\n chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "Authorization:\r\n Bearer SECRETKEY0123456789\r\n\r\n",
        "Authorization:\r\n\tSECRETKEY0123456789\r\nX-After: 1\r\n\r\n",
        "X-A: 1\r\n\t2\r\nX-B: 3\r\n\r\n",
        "X-A: 1\n 2\n\n",
        // A NUL in the value, which MHD ends the value at: the fold behind it was missed (a review).
        "Content-Length: 24\u{0}\r\n 0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
        "Content-Length: 24\u{0}\u{0}x\r\n 0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
        "X-A: 1\r\n 2\r\n 3\r\n\r\n",
    ])
    func aFoldedFieldIsRefused(head: String) throws {
        let response = try Self.expectInvalidHeader(head, saying: "folded")
        #expect(!response.text.contains("SECRET"), "\(response)")
    }

    /// A NUL inside a field's value, which MHD ends the value at: `Transfer-Encoding: chunked\0, gzip` was framed
    /// as chunked, `Content-Length: 3\0 9` as 3, and a key followed by a NUL and junk opened its tenant, where a
    /// proxy that turns the NUL into a space reads another request (a sweep). Refused, in any field, the last too,
    /// after CRLFs or bare LFs.
    @Test(arguments: [
        "Transfer-Encoding: chunked\u{0}, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "Content-Length: 3\u{0} 9\r\n\r\nabc",
        "Authorization: Bearer KEY\u{0}\u{1}junk\r\nContent-Length: 3\r\n\r\nabc",
        "Content-Length: 3\r\nX-Request-Id: abc\u{0}def\r\n\r\nabc",
        "Content-Length: 3\nX-Last: a\u{0}b\n\nabc",
    ])
    func aNULInAFieldsValueIsRefused(head: String) throws {
        try Self.expectInvalidHeader(head, saying: "NUL")
    }

    /// What the fold's check reads after a value: a body, or another field, that begins with a space is no fold.
    @Test func aBodyThatBeginsWithASpaceIsNoFold() throws {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port, timeout: 5)
            for head in [
                "Content-Length: 4\r\n", "Content-Length: 4\r\nX-Empty:\r\n", "X-Empty:\r\nContent-Length: 4\r\n",
                "X-Spaced: \t  a  \r\nContent-Length: 4\r\n",
            ] {
                let response = try connection.exchange("POST /t HTTP/1.1\r\nHost: x\r\n" + head + "\r\n abc")
                #expect(echoed("body", in: response) == ["4 \(fnv1a(Array(" abc".utf8)))"], "\(head): \(response)")
            }
            // Bare LFs, which MHD takes, and a body that begins with a space (the first check took it for a fold).
            let bare = try TestConnection.connected(port: server.address.port, timeout: 5)
            let response = try bare.exchange("POST /t HTTP/1.1\nHost: x\nContent-Length: 4\n\n abc")
            #expect(echoed("body", in: response) == ["4 \(fnv1a(Array(" abc".utf8)))"], "\(response)")
        }
    }

    @Test func aChunkedBodyArrivesWhole() throws {
        var generator = SeededRandom(seed: 0xC4C4)
        let body = randomBytes(200_000, seed: 0xC4C5)
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            var offset = 0
            while offset < body.count {
                let size = min(body.count - offset, Int.random(in: 1...20_000, using: &generator))
                try connection.send(Array(String(size, radix: 16).utf8) + [13, 10])
                try connection.send(Array(body[offset..<(offset + size)]) + [13, 10])
                offset += size
            }
            try connection.send("0\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(echoed("body", in: response) == ["\(body.count) \(fnv1a(body))"])
            let next = try connection.exchange("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(echoed("path", in: next) == ["/after"])
        }
    }

    @Test func aDeclaredBodyOverTheLimitIs413WithoutReadingIt() throws {
        let calls = CallCounter()
        let configuration = testConfiguration(maximumBodySize: 1000)
        try withServer(configuration, handler: counting(calls)) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            // No body is sent at all: a server that waited for it would time out here.
            try connection.send("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 413)
            #expect(response.text.contains(#""code":"body_too_large""#))
            #expect(response.text.contains("1000 bytes"))
            #expect(response.header("connection")?.lowercased() == "close")
            #expect(connection.closesWithoutData(within: 3))

            // With Expect: 100-continue the client never gets the go-ahead.
            let expecting = try TestConnection.connected(port: server.address.port)
            try expecting.send(
                "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\nExpect: 100-continue\r\n\r\n")
            #expect(try expecting.readResponse().status == 413)

            // At the limit exactly, the body is taken.
            let atLimit = try TestConnection.connected(port: server.address.port)
            try atLimit.send("POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            try atLimit.send([UInt8](repeating: 65, count: 1000))
            #expect(try atLimit.readResponse().status == 200)
            #expect(calls.count == 1)
        }
    }

    @Test func aChunkedBodyIs413AsSoonAsItCrossesTheLimit() throws {
        let calls = CallCounter()
        let log = LogLines()
        let configuration = testConfiguration(maximumBodySize: 1000)
        try withServer(configuration, log: log, handler: counting(calls)) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("POST /stream HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            // 1,200 bytes in four chunks and no last chunk: the answer must come without the end of the body.
            for _ in 0..<4 {
                try connection.send("12c\r\n" + String(repeating: "z", count: 300) + "\r\n")
            }
            let response = try connection.readResponse()
            #expect(response.status == 413)
            #expect(response.text.contains(#""code":"body_too_large""#))
            #expect(connection.closesWithoutData(within: 3))
            #expect(calls.count == 0)
            #expect(log.contains("chunked request body crossed the limit of 1000 bytes: answered 413"))
            #expect(!log.contains("Application reported internal error"))

            // The server goes on serving, and a chunked body at the limit is taken.
            let next = try TestConnection.connected(port: server.address.port)
            try next.send("POST /ok HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            try next.send("3e8\r\n" + String(repeating: "y", count: 1000) + "\r\n0\r\n\r\n")
            let taken = try next.readResponse()
            #expect(taken.status == 200)
            #expect(echoed("body", in: taken).first?.hasPrefix("1000 ") == true)
            #expect(calls.count == 1)
        }
    }

    @Test func aScreenRefusesARequestBeforeItsBodyIsKept() throws {
        let calls = CallCounter()
        let screened = CallCounter()
        let screen: @Sendable (HTTPRequest) -> HTTPResponse? = { request in
            screened.increment()
            #expect(request.body.isEmpty)
            guard request.headers["authorization"] == "Bearer k" else {
                return .error(status: .unauthorized, code: "unauthorized", message: "no key")
            }
            return nil
        }
        try withServer(screen: screen, handler: counting(calls)) { server in
            // A client that waits for 100 Continue gets the refusal at once and sends nothing: a server that waited
            // for the body before screening would time out here.
            let waiting = try TestConnection.connected(port: server.address.port)
            try waiting.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\nExpect: 100-continue\r\n\r\n")
            let response = try waiting.readResponse()
            #expect(response.status == 401)
            #expect(response.header("connection")?.lowercased() == "close")
            #expect(waiting.closesWithoutData(within: 3))
            #expect(calls.count == 0)

            // One that sends its body regardless gets the refusal after it (not a connection closed under it, which
            // it would read as a broken pipe); the body is dropped, and the connection goes on.
            let sending = try TestConnection.connected(port: server.address.port)
            try sending.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n")
            try sending.send(randomBytes(300_000, seed: 0x5C12))
            #expect(try sending.readResponse().status == 401)
            #expect(server.bodyBytesInMemory == 0)
            #expect(try sending.exchange("GET /after HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            #expect(calls.count == 1)

            // A chunked body is screened as well, before its first chunk.
            let chunked = try TestConnection.connected(port: server.address.port)
            try chunked.send("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            try chunked.send("5\r\nhello\r\n0\r\n\r\n")
            #expect(try chunked.readResponse().status == 401)

            // One the screen lets through is read and answered by the handler.
            let admitted = try TestConnection.connected(port: server.address.port)
            try admitted.send("POST /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: 5\r\n\r\nhello")
            let answered = try admitted.readResponse()
            #expect(answered.status == 200)
            #expect(echoed("body", in: answered) == ["5 \(fnv1a(Array("hello".utf8)))"])
            #expect(calls.count == 2)
            // A request without a body is not screened: the handler decides with the whole request anyway.
            let before = screened.count
            #expect(try admitted.exchange("GET /b HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            #expect(screened.count == before)
        }
    }

    @Test func bodiesHeldAtOnceAreBoundedAndLetGoWhenAnswered() throws {
        let calls = CallCounter()
        let log = LogLines()
        let configuration = testConfiguration(maximumBodySize: 4000, bodyBytesInMemoryLimit: 8000)
        try withServer(configuration, log: log, handler: counting(calls)) { server in
            func waitUntilHeld(_ bytes: Int) {
                let deadline = ContinuousClock.now + .seconds(5)
                while server.bodyBytesInMemory != bytes && ContinuousClock.now < deadline { sleepSeconds(0.01) }
                #expect(server.bodyBytesInMemory == bytes)
            }
            // Two bodies of 4,000 under way: each counts whole from its head on, 8,000 held.
            let first = try TestConnection.connected(port: server.address.port)
            let second = try TestConnection.connected(port: server.address.port)
            for connection in [first, second] {
                try connection.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n")
                try connection.send([UInt8](repeating: 65, count: 3000))
            }
            waitUntilHeld(8000)

            // A third declared body does not fit: 503 at once to a client that waits for 100 Continue...
            let waiting = try TestConnection.connected(port: server.address.port)
            try waiting.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\nExpect: 100-continue\r\n\r\n")
            let busy = try waiting.readResponse()
            #expect(busy.status == 503)
            #expect(busy.text.contains(#""code":"busy""#))
            #expect(busy.header("retry-after") == "1")
            #expect(waiting.closesWithoutData(within: 3))
            #expect(log.contains("a declared body of 200 bytes would take the bodies held at once past 8000 bytes: answered 503"))
            // ...and after its body, dropped, to one that sends it regardless.
            let sending = try TestConnection.connected(port: server.address.port)
            try sending.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n" + String(repeating: "y", count: 200))
            #expect(try sending.readResponse().status == 503)
            // A small one (a 64th of the limit or less) has room of its own, an eighth more, that large bodies
            // held slowly cannot take: it was refused as the large ones were.
            let small = try TestConnection.connected(port: server.address.port)
            #expect(try small.exchange("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789").status == 200)

            // A chunked one is refused as soon as it would cross (past the small bodies' room: 200 bytes).
            let chunked = try TestConnection.connected(port: server.address.port)
            try chunked.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            try chunked.send("c8\r\n" + String(repeating: "z", count: 200) + "\r\n")
            #expect(try chunked.readResponse().status == 503)
            // Logged before the server closes the connection.
            #expect(chunked.closesWithoutData(within: 3))
            #expect(log.contains("would cross 8000 bytes: answered 503"))
            // A small chunked one has the small bodies' room too.
            let smallChunked = try TestConnection.connected(port: server.address.port)
            let sent = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n"
            #expect(try smallChunked.exchange(sent).status == 200)
            #expect(server.bodiesRefusedForMemory == 3)
            waitUntilHeld(8000)

            // The two finish and are answered; what they held is let go, and the next body is taken.
            for connection in [first, second] {
                try connection.send([UInt8](repeating: 65, count: 1000))
                #expect(try connection.readResponse().status == 200)
            }
            waitUntilHeld(0)
            let next = try TestConnection.connected(port: server.address.port)
            try next.send("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n")
            try next.send([UInt8](repeating: 66, count: 4000))
            #expect(try next.readResponse().status == 200)
            #expect(calls.count == 5)
        }
    }

    @Test func aLargeResponseArrivesWhole() throws {
        let payload = randomBytes(3_000_000, seed: 0xB16)
        let handler: HTTPServer.Handler = { _ in
            HTTPResponse(headers: ["Content-Type": "application/octet-stream"], body: payload)
        }
        try withServer(handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let response = try connection.exchange("GET /large HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(response.body.count == payload.count)
            #expect(response.body == payload)
        }
    }

    @Test func aResponseMHDCannotSendBecomes500AndALogLine() throws {
        let log = LogLines()
        let handler: HTTPServer.Handler = { request in
            switch request.path {
            case "/length": HTTPResponse(headers: ["Content-Length": "5"], body: Array("hello".utf8))
            case "/newline": HTTPResponse(headers: ["X-Bad": "a\r\nInjected: yes"])
            case "/status": HTTPResponse(status: 42)
            case "/empty": HTTPResponse(headers: ["X-Empty": ""])
            case "/name": HTTPResponse(headers: ["Bad Name": "v"])
            default: .text("fine")
            }
        }
        try withServer(log: log, handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            for path in ["/length", "/newline", "/status", "/empty", "/name"] {
                let response = try connection.exchange("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(response.status == 500, "\(path)")
                #expect(response.header("injected") == nil)
            }
            #expect(log.all.filter { $0.contains("answered 500 instead of the handler's response") }.count == 5)
            #expect(try connection.exchange("GET /fine HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
        }
    }
}
