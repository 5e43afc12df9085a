import HTTPServer
import SuggestCore

/// The routes of the API: path templates, the methods each answers, and whether a key is needed.
///
/// A path is matched segment by segment (segments are percent-decoded, so `%2F` is a slash inside an identifier);
/// a template's `{name}` takes one segment. A path that no template matches is 404; a matching path with another
/// method is 405 with `Allow`.
struct Router: Sendable {
    /// One segment of a template.
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    struct Route: Sendable {
        /// The template as written in the contract and the OpenAPI document: what metrics and logs name.
        let template: String
        let segments: [Segment]
        let methods: [HTTPMethod: Endpoint]
        /// Routes under `/v1/accounts/` need a key when the server has keys.
        let needsKey: Bool
        /// The methods that take a body, and what body; any other method takes none.
        let bodies: [HTTPMethod: Body]

        /// A route that answers `GET` answers `HEAD` too, as HTTP asks of every general-purpose server (RFC 9110,
        /// 9.1): the same endpoint, whose body libmicrohttpd does not send.
        init(_ template: String, needsKey: Bool, _ methods: [HTTPMethod: Endpoint], bodies: [HTTPMethod: Body] = [:]) {
            self.template = template
            self.needsKey = needsKey
            self.bodies = bodies
            var methods = methods
            if let get = methods[.get], methods[.head] == nil { methods[.head] = get }
            self.methods = methods
            segments = template.split(separator: "/").map { part in
                part.hasPrefix("{") && part.hasSuffix("}")
                    ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
            }
        }

        /// The parameters when `path` matches, else `nil`.
        func match(_ path: [String]) -> [String: String]? {
            guard path.count == segments.count else { return nil }
            var parameters: [String: String] = [:]
            for (segment, part) in zip(segments, path) {
                switch segment {
                case .literal(let literal): guard part == literal else { return nil }
                case .parameter(let name): parameters[name] = part
                }
            }
            return parameters
        }

        /// The `Allow` header's value.
        var allow: String {
            methods.keys.map(\.rawValue).sorted().joined(separator: ", ")
        }
    }

    /// What answers one method of one route.
    typealias Endpoint = @Sendable (inout Call) throws -> HTTPResponse

    /// The body a method of a route takes, known from the request's head: the server refuses any other before
    /// reading a byte of it, and holds none of it in memory.
    struct Body: Sendable {
        /// The media types it may have, without parameters.
        let mediaTypes: [String]
        /// At most this many bytes (`nil`: the server's own limit).
        let maximumBytes: Int?
        /// What the body is, for messages: "a feedback body".
        let name: String
    }

    let routes: [Route]

    /// The route and parameters for a path, if any template matches.
    func route(for path: [String]) -> (Route, [String: String])? {
        for route in routes { if let parameters = route.match(path) { return (route, parameters) } }
        return nil
    }
}

/// One request on its way through the API: what the route matched, who is asking, and where to answer from.
struct Call {
    let request: HTTPRequest
    let parameters: [String: String]
    /// The key's tenant; `nil` on a server without keys (and on routes that need no key).
    let tenant: String?
    let api: API

    /// The account the path names, checked, in the caller's tenant.
    func account() throws -> TenantAccount {
        TenantAccount(tenant: tenant, account: try parameter("account", code: "invalid_account"))
    }

    /// The account the path names, for a route that writes to it: the name the store gives it (`tenant:account`) is
    /// held to the limit of a donation's strings too, since a longer one would be written by the command line's
    /// `export` as a line its `import` refuses, and no option could name it. Routes that only read or take away use
    /// `account()`, so that an account stored before this rule can still be exported and deleted.
    func accountToWrite() throws -> TenantAccount {
        let account = try account()
        let stored = account.storeAccount.utf8.count
        guard stored <= Interaction.maximumStringBytes else {
            throw APIError.badRequest(
                "invalid_account",
                "account is \(account.account.utf8.count) bytes long; with the tenant's prefix it would be \(stored), "
                    + "and the limit is \(Interaction.maximumStringBytes)")
        }
        return account
    }

    /// A path parameter, checked like the contract's identifiers: non-empty, at most 4096 bytes (the decoded
    /// segment is UTF-8 already). Any other character is allowed, as in a donation: a conversation whose identifier
    /// holds a line break must still be deletable.
    func parameter(_ name: String, code: String) throws -> String {
        guard let value = parameters[name], !value.isEmpty else {
            throw APIError.badRequest(code, "\(name) must not be empty")
        }
        guard value.utf8.count <= Interaction.maximumStringBytes else {
            throw APIError.badRequest(code, "\(name) is longer than \(Interaction.maximumStringBytes) bytes")
        }
        return value
    }

    /// Runs `body` with a store connection of this request's own, counting the store's failures.
    func withStore<T>(_ body: (any DonationStore) throws -> T) throws -> T {
        try api.withStore(body)
    }
}
