/// One name and value of a request's query, percent-decoded (`+` reads as a space).
public struct HTTPQueryItem: Hashable, Sendable {
    /// The name, decoded.
    public var name: String
    /// The value, decoded; empty for a name without `=`.
    public var value: String

    /// A query item.
    /// - Parameters:
    ///   - name: the decoded name.
    ///   - value: the decoded value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A whole request, body included, as the handler sees it.
///
/// The server builds it once every byte of the body has arrived; a body over the limit never reaches a handler.
public struct HTTPRequest: Sendable {
    /// The method, as sent (case-sensitive).
    public var method: HTTPMethod
    /// The request target exactly as sent on the request line: path and query, nothing decoded.
    public var target: String
    /// The path part of the target, not decoded: `/v1/accounts/al%2Fice/donations`.
    public var path: String
    /// The path's segments, each percent-decoded: `["v1", "accounts", "al/ice", "donations"]`.
    ///
    /// `/` has no segment; a trailing slash leaves an empty last segment (`/a/` is `["a", ""]`). A target with a `%`
    /// that does not start two hex digits is refused (`RequestTarget`); `+` stays `+`.
    public var pathSegments: [String]
    /// The query part of the target after `?`, not decoded; `nil` when there is no `?`.
    public var query: String?
    /// The query's items in order, repeated names kept, each percent-decoded with `+` as a space.
    public var queryItems: [HTTPQueryItem]
    /// The header fields, in order; look one up with `headers["content-type"]` in any case.
    public var headers: HTTPHeaders
    /// The body's bytes (empty without a body).
    public var body: [UInt8]
    /// Where the client connected from; `nil` only if the socket's family is neither IPv4 nor IPv6.
    public var clientAddress: SocketAddress?
    /// The protocol version of the request line.
    public var version: HTTPVersion

    /// A request; the server makes them, tests and routers may too.
    /// - Parameters:
    ///   - method: the method.
    ///   - target: the raw target; its path, segments, query and items are read from it.
    ///   - headers: the header fields.
    ///   - body: the body's bytes.
    ///   - clientAddress: where the client connected from.
    ///   - version: the protocol version.
    /// - Throws: `HTTPServerError` when a decoded segment or query item is not UTF-8.
    public init(
        method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        clientAddress: SocketAddress? = nil, version: HTTPVersion = .http11
    ) throws(HTTPServerError) {
        let parts = try RequestTarget(target)
        self.method = method
        self.target = target
        path = parts.path
        pathSegments = parts.segments
        query = parts.query
        queryItems = parts.items
        self.headers = headers
        self.body = body
        self.clientAddress = clientAddress
        self.version = version
    }

    /// The first value of the query item `name`, or `nil` when there is none.
    /// - Parameter name: the decoded name.
    /// - Complexity: O(*n*) in the number of items.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// Every value of the query item `name`, in order (`contentType=a&contentType=b`).
    /// - Parameter name: the decoded name.
    /// - Returns: the values; empty when there is none.
    /// - Complexity: O(*n*) in the number of items.
    public func queryValues(_ name: String) -> [String] {
        queryItems.filter { $0.name == name }.map(\.value)
    }
}
