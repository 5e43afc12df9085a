/// A response's status code; MHD writes the reason phrase that goes with it.
public struct HTTPStatus: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The three-digit code.
    public var code: Int

    /// A status by its code.
    /// - Parameter code: 100 to 999 (MHD refuses others and the request is answered 500).
    public init(_ code: Int) { self.code = code }

    /// A status by its code.
    /// - Parameter rawValue: the three-digit code.
    public init(rawValue: Int) { code = rawValue }

    /// A status from a literal: `let status: HTTPStatus = 404`.
    /// - Parameter value: the three-digit code.
    public init(integerLiteral value: Int) { code = value }

    public var rawValue: Int { code }
    public var description: String { String(code) }

    /// 200.
    public static let ok = HTTPStatus(200)
    /// 201.
    public static let created = HTTPStatus(201)
    /// 202.
    public static let accepted = HTTPStatus(202)
    /// 204: no body is sent, whatever the response holds.
    public static let noContent = HTTPStatus(204)
    /// 400.
    public static let badRequest = HTTPStatus(400)
    /// 401.
    public static let unauthorized = HTTPStatus(401)
    /// 403.
    public static let forbidden = HTTPStatus(403)
    /// 404.
    public static let notFound = HTTPStatus(404)
    /// 405.
    public static let methodNotAllowed = HTTPStatus(405)
    /// 409.
    public static let conflict = HTTPStatus(409)
    /// 413: the server sends it itself for a body over `Configuration.maximumBodySize`.
    public static let contentTooLarge = HTTPStatus(413)
    /// 415.
    public static let unsupportedMediaType = HTTPStatus(415)
    /// 429.
    public static let tooManyRequests = HTTPStatus(429)
    /// 500.
    public static let internalServerError = HTTPStatus(500)
    /// 503.
    public static let serviceUnavailable = HTTPStatus(503)
    /// 505.
    public static let httpVersionNotSupported = HTTPStatus(505)
}
