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
        ("/%zz/%4/%", "/%zz/%4/%", ["%zz", "%4", "%"]),
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
        let request = try HTTPRequest(method: .get, target: "/s?a=1&a=2&b=%20x&c=a+b&d=%2B&&flag&=v&e=%zz%4%")
        let pairs = request.queryItems.map { "\($0.name)=\($0.value)" }
        #expect(pairs == ["a=1", "a=2", "b= x", "c=a b", "d=+", "flag=", "=v", "e=%zz%4%"])
        #expect(request.query == "a=1&a=2&b=%20x&c=a+b&d=%2B&&flag&=v&e=%zz%4%")
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
