/// A ranking policy name that `RankingPolicy.named(_:)` does not know.
public struct UnknownPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name that was asked for.
    public var name: String
    /// The names that would have been accepted, in the order `RankingPolicy.all` lists them.
    public var validNames: [String]

    init(name: String, validNames: [String]) {
        self.name = name
        self.validNames = validNames
    }

    /// The name and the valid ones, in one line.
    public var description: String {
        "unknown policy \"\(name.prefix(60))\"; use one of: " + validNames.joined(separator: ", ")
    }
}
