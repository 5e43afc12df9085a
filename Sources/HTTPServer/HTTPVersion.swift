import CSystem

/// The protocol version of a request, from its request line.
public struct HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    /// The major version: 1.
    public var major: Int
    /// The minor version: 0 or 1.
    public var minor: Int

    /// A version by its numbers.
    /// - Parameters:
    ///   - major: the major version.
    ///   - minor: the minor version.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// `HTTP/1.0`: no keep-alive unless the client asks for it.
    public static let http10 = HTTPVersion(major: 1, minor: 0)
    /// `HTTP/1.1`.
    public static let http11 = HTTPVersion(major: 1, minor: 1)

    /// `HTTP/1.1` and the like.
    public var description: String { "HTTP/\(major).\(minor)" }

    /// Reads `HTTP/x.y` as MHD hands it over (it answers 505 itself to any version it does not serve); anything
    /// else reads as HTTP/1.0.
    init(parsing text: UnsafePointer<CChar>?) {
        guard let text, strlen(text) == 8 else {
            self = .http10
            return
        }
        let prefix: [CChar] = [72, 84, 84, 80, 47]  // "HTTP/"
        let major = Int(text[5]) - 48
        let minor = Int(text[7]) - 48
        guard (0..<5).allSatisfy({ text[$0] == prefix[$0] }), text[6] == 46, (0...9).contains(major),
            (0...9).contains(minor)
        else {
            self = .http10
            return
        }
        self.init(major: major, minor: minor)
    }
}
