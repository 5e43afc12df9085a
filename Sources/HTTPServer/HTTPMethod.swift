/// A request method (`GET`, `POST`, ...), as the client sent it: methods are case-sensitive.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method's name.
    public var rawValue: String

    /// A method by its name.
    /// - Parameter rawValue: the name as sent, for example `GET`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A method by its name.
    /// - Parameter name: the name as sent, for example `GET`.
    public init(_ name: String) { rawValue = name }

    public var description: String { rawValue }

    /// `GET`.
    public static let get = HTTPMethod("GET")
    /// `HEAD`: MHD answers it as `GET` without sending the body.
    public static let head = HTTPMethod("HEAD")
    /// `POST`.
    public static let post = HTTPMethod("POST")
    /// `PUT`.
    public static let put = HTTPMethod("PUT")
    /// `DELETE`.
    public static let delete = HTTPMethod("DELETE")
    /// `PATCH`.
    public static let patch = HTTPMethod("PATCH")
    /// `OPTIONS`.
    public static let options = HTTPMethod("OPTIONS")
}
