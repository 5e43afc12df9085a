import HTTPServer
import Testing

/// The target's decoding and the header look-up, on values made here; the server tests check the same through a
/// real socket.
@Suite struct RequestTargetTests {
    @Test(arguments: [
        ("/", "/", [String]()),
        ("/v1/accounts/alice/donations", "/v1/accounts/alice/donations", ["v1", "accounts", "alice", "donations"]),
        ("/a/", "/a/", ["a", ""]),
        ("//", "//", ["", ""]),
        ("/al%2Fice/x", "/al%2Fice/x", ["al/ice", "x"]),
        ("/a+b/%20c", "/a+b/%20c", ["a+b", " c"]),
        ("/%25zz/%254/%25", "/%25zz/%254/%25", ["%zz", "%4", "%"]),
        ("/caf\u{E9}", "/caf\u{E9}", ["caf\u{E9}"]),
        ("/caf%C3%A9", "/caf%C3%A9", ["café"]),
        ("http://example.com/x/y?q=1", "/x/y", ["x", "y"]),
        ("HTTPS://example.com", "/", []),
        ("*", "*", []),
    ])
    func pathSegments(target: String, path: String, segments: [String]) throws {
        let request = try HTTPRequest(method: .get, target: target)
        #expect(request.path == path)
        #expect(request.pathSegments == segments)
    }

    @Test func queryItemsKeepOrderAndRepeats() throws {
        let request = try HTTPRequest(method: .get, target: "/s?a=1&a=2&b=%20x&c=a+b&d=%2B&&flag&=v&e=%25zz")
        let pairs = request.queryItems.map { "\($0.name)=\($0.value)" }
        #expect(pairs == ["a=1", "a=2", "b= x", "c=a b", "d=+", "flag=", "=v", "e=%zz"])
        #expect(request.query == "a=1&a=2&b=%20x&c=a+b&d=%2B&&flag&=v&e=%25zz")
        #expect(request.queryValue("a") == "1")
        #expect(request.queryValues("a") == ["1", "2"])
        #expect(request.queryValue("missing") == nil)
        #expect(request.queryValues("missing").isEmpty)
    }

    @Test func noQueryIsNotAnEmptyQuery() throws {
        #expect(try HTTPRequest(method: .get, target: "/x").query == nil)
        #expect(try HTTPRequest(method: .get, target: "/x?").query == "")
        #expect(try HTTPRequest(method: .get, target: "/x?").queryItems.isEmpty)
    }

    @Test(arguments: ["/%FF", "/a?x=%C3", "/a?%80=1", "/a%00b/donations", "/a?person=%00"])
    func invalidUTF8AndNULAreRefused(target: String) {
        #expect(throws: HTTPServerError.self) { try HTTPRequest(method: .get, target: target) }
    }

    /// A part a client did not encode is refused, not read one way of two: a raw `#` cut `team#1` to `team` (and a
    /// deletion of `team#1/general` deleted the account `team`), `a%` and `a%25` were one name.
    @Test(arguments: [
        "/v1/accounts/team#1/conversations/general", "/v1/accounts/chat#5", "/a?x=1#fragment", "/a#",
        "/a%", "/a%2", "/a%zz/b", "/a?x=%4", "/a?x=100%", "/a b", "/a\"b", "/a\u{1}b", "/a\u{7F}", "/a\tb",
        "/a<b>",
    ])
    func unencodedCharactersAreRefused(target: String) {
        #expect(throws: HTTPServerError.self) { try HTTPRequest(method: .get, target: target) }
    }

    /// What browsers and `fetch` send raw (the URL standard encodes none of these in a query, nor `|^` in a path)
    /// is taken literally: `exclude=a|b` is two names joined by a bar.
    @Test func charactersClientsSendRawAreTakenLiterally() throws {
        let request = try HTTPRequest(method: .get, target: "/a|b/c^d?exclude=a|b&x={1}&y=`z`&w=\\")
        #expect(request.pathSegments == ["a|b", "c^d"])
        #expect(request.queryItems.map(\.value) == ["a|b", "{1}", "`z`", "\\"])
    }

    @Test func headersIgnoreCaseAndKeepRepeats() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-Tag": "a", "x-tag": "b"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.values(for: "X-TAG") == ["a", "b"])
        #expect(headers["Content-Typ"] == nil)
        #expect(headers["Content-Types"] == nil)
        headers.set(name: "x-TAG", value: "c")
        #expect(headers.values(for: "x-tag") == ["c"])
        headers.remove(name: "CONTENT-type")
        #expect(!headers.contains("content-type"))
        #expect(headers.count == 1)
    }

    @Test func errorBodiesAreJSON() {
        let response = HTTPResponse.error(status: .badRequest, code: "bad", message: "a \"quoted\"\nline\u{1}")
        #expect(response.status == .badRequest)
        #expect(response.headers["content-type"] == "application/json")
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"error":{"code":"bad","message":"a \"quoted\"\nline\u0001"}}"#)
    }
}

/// MHD's own error lines quote the request's target, decoded; the log names no path (docs/serving.md, "Logs and
/// metrics"). A client that closed its connection before its answer put its account's name in the log.
@Suite struct LoggedTargetTests {
    @Test(arguments: [
        (
            "Failed to send the response headers for the request for `/v1/accounts/bob@example.com/donations'. "
                + "Error: The connection was forcibly closed by remote peer",
            "Failed to send the response headers for the request for (the request's target). Error: The connection "
                + "was forcibly closed by remote peer"
        ),
        ("for `/v1/accounts/o'brien/block'.", "for (the request's target)."),
        ("Server reached connection limit. Closing inbound connection.", "Server reached connection limit. Closing "
            + "inbound connection."),
        ("a ' quote before a ` backquote", "a ' quote before a ` backquote"),
        // The line cut at the buffer's end, before its closing quote.
        ("Failed to send data in request for `/v1/accounts/" + String(repeating: "x", count: 900), "Failed to send "
            + "data in request for (the request's target)"),
        ("Received HTTP/1.1 request without `Host' header.", "Received HTTP/1.1 request without `Host' header."),
        // Targets without their leading slash, which MHD serves all the same.
        (
            "Failed to send the response headers for the request for `v1/accounts/dave@example.com/block'. Error: x",
            "Failed to send the response headers for the request for (the request's target). Error: x"
        ),
        ("Failed to send data in request for `dave@example.com'.", "Failed to send data in request for (the request's "
            + "target)."),
        ("a quoted `name/with/slashes' in a line", "a quoted (the request's target) in a line"),
        ("Error during poll: `Input/output error'", "Error during poll: `Input/output error'"),
    ])
    func targetsLeaveTheLine(line: String, logged: String) {
        #expect(withoutRequestTargets(line) == logged)
    }
}
