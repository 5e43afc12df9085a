import HTTPServer
import SuggestTestSupport
import Synchronization
import Testing

/// Requests through a real server on loopback: routing, the target's parts, headers, keep-alive.
@Suite struct RoutingTests {
    /// A small router of the kind the API will have: by method and decoded segments.
    static let router: HTTPServer.Handler = { request in
        let segments = request.pathSegments
        guard segments.count >= 2, segments[0] == "v1", segments[1] == "items", segments.count <= 3 else {
            return .error(status: .notFound, code: "not_found", message: "no route for \(request.path)")
        }
        switch (request.method, segments.count) {
        case (.get, 2): return .json(#"{"items":[]}"#)
        case (.post, 2): return .json(#"{"created":true}"#, status: .created)
        case (.delete, 3): return .text("deleted \(segments[2])\n")
        default:
            var response = HTTPResponse.error(
                status: .methodNotAllowed, code: "method_not_allowed", message: "not with \(request.method)")
            response.headers.append(name: "Allow", value: "GET, POST, DELETE")
            return response
        }
    }

    @Test func routesByMethodAndPath() throws {
        try withServer(handler: RoutingTests.router) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let list = try connection.exchange("GET /v1/items HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(list.status == 200)
            #expect(list.text == #"{"items":[]}"#)
            #expect(list.header("content-type") == "application/json")
            let created = try connection.exchange("POST /v1/items HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            #expect(created.status == 201)
            let deleted = try connection.exchange("DELETE /v1/items/a%2Fb HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(deleted.status == 200)
            #expect(deleted.text == "deleted a/b\n")
            let wrongMethod = try connection.exchange("PUT /v1/items HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("allow") == "GET, POST, DELETE")
            let missing = try connection.exchange("GET /v2/nothing HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(missing.status == 404)
            #expect(missing.text.contains(#""code":"not_found""#))
        }
    }

    @Test func theTargetArrivesRawAndDecoded() throws {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let response = try connection.exchange(
                "GET /v1/acc%20ounts/al%2Fice/?a=1&a=2&b=%20x&c=a+b&d=%2B&e=%25zz&f=%254&g HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(response.status == 200)
            #expect(
                echoed("target", in: response) == ["/v1/acc%20ounts/al%2Fice/?a=1&a=2&b=%20x&c=a+b&d=%2B&e=%25zz&f=%254&g"])
            #expect(echoed("path", in: response) == ["/v1/acc%20ounts/al%2Fice/"])
            #expect(echoed("segments", in: response) == ["[v1][acc ounts][al/ice][]"])
            #expect(
                echoed("item", in: response) == [
                    "[a]=[1]", "[a]=[2]", "[b]=[ x]", "[c]=[a b]", "[d]=[+]", "[e]=[%zz]", "[f]=[%4]", "[g]=[]",
                ])
        }
    }

    @Test func aTargetThatIsNotUTF8OnceDecodedGets400AndNoHandler() throws {
        let calls = CallCounter()
        try withServer(handler: counting(calls)) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let bad = try connection.exchange("GET /x?name=%FF HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(bad.status == 400)
            #expect(bad.text.contains("invalid_target"))
            try connection.send(Array("GET /caf".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            let rawBad = try connection.readResponse()
            #expect(rawBad.status == 400)
            #expect(rawBad.text.contains("invalid_target"))
            let fragment = try connection.exchange("DELETE /v1/accounts/team#1/conversations/general HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(fragment.status == 400)
            #expect(fragment.text.contains("'#'"))
            #expect(calls.count == 0)
        }
    }

    @Test func headersAreCaseInsensitiveAndRepeatable() throws {
        let handler: HTTPServer.Handler = { request in
            let first = request.headers["X-CUSTOM-THING"] ?? "<none>"
            let all = request.headers.values(for: "x-custom-thing").joined(separator: ",")
            let type = request.headers["content-type"] ?? "<none>"
            var response = HTTPResponse.text("\(first)|\(all)|\(type)")
            response.headers.append(name: "X-Answer", value: "yes")
            return response
        }
        try withServer(handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let response = try connection.exchange(
                "GET / HTTP/1.1\r\nHost: x\r\nX-Custom-Thing: Value1\r\nx-custom-thing:  value2 \r\n"
                    + "CONTENT-TYPE: text/csv\r\n\r\n")
            #expect(response.text == "Value1|Value1,value2|text/csv")
            #expect(response.header("x-answer") == "yes")
        }
    }

    /// An HTTP/1.1 request without a `Host`, or with two, and a second `Content-Type` or `Authorization` are
    /// malformed (400 `invalid_header`) and reach no handler: they got 200, the first value taken, where a proxy
    /// in front may have read the other. HTTP/1.0 needs no `Host`.
    @Test func aMissingOrRepeatedSingleHeaderIsRefused() throws {
        let calls = Mutex(0)
        let handler: HTTPServer.Handler = { _ in
            calls.withLock { $0 += 1 }
            return HTTPResponse.text("ok")
        }
        try withServer(handler: handler) { server in
            for head in [
                "GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: a\r\nContent-Type: text/csv\r\ncontent-type: application/json\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer one\r\nAuthorization: Bearer two\r\n\r\n",
            ] {
                let connection = try TestConnection.connected(port: server.address.port)
                let response = try connection.exchange(head)
                #expect(response.status == 400 && response.text.contains(#""code":"invalid_header""#), "\(head): \(response)")
            }
            let old = try TestConnection.connected(port: server.address.port)
            #expect(try old.exchange("GET / HTTP/1.0\r\n\r\n").status == 200)
            #expect(calls.withLock { $0 } == 1)
        }
    }

    @Test func twoRequestsShareOneKeptAliveConnection() throws {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let first = try connection.exchange("GET /one HTTP/1.1\r\nHost: x\r\n\r\n")
            let second = try connection.exchange("GET /two HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(echoed("path", in: first) == ["/one"])
            #expect(echoed("path", in: second) == ["/two"])
            #expect(first.header("connection") == nil)
            // The same client port both times: one connection, not two.
            let expected = "127.0.0.1:\(connection.localPort)"
            #expect(echoed("client", in: first) == [expected])
            #expect(echoed("client", in: second) == [expected])
            // And it is still open for a third.
            #expect(connection.staysSilent(for: 0.2))
            connection.setTimeout(5)
            let third = try connection.exchange("GET /three HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(echoed("path", in: third) == ["/three"])
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("GET /p1 HTTP/1.1\r\nHost: x\r\n\r\nGET /p2 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(echoed("path", in: try connection.readResponse()) == ["/p1"])
            #expect(echoed("path", in: try connection.readResponse()) == ["/p2"])
        }
    }

    @Test func versionHeadAndHTTP10() throws {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let head = try connection.exchange("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect((Int(head.header("content-length") ?? "") ?? 0) > 0)
            let old = try TestConnection.connected(port: server.address.port)
            let response = try old.exchange("GET /old HTTP/1.0\r\n\r\n")
            #expect(response.status == 200)
            #expect(echoed("version", in: response) == ["HTTP/1.0"])
            #expect(old.closesWithoutData(within: 2))
        }
    }
}
