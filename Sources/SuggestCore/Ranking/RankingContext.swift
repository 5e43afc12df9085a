/// What the ranker knows of the moment of a query: when it is, what is being shared, who is in it, and what may
/// not be suggested.
public struct RankingContext: Sendable, Hashable {
    /// The moment the scores are taken at.
    public var at: Timestamp
    /// How many suggestions to return.
    public var limit: Int
    /// Types of what is being shared (`public.jpeg`): conversations that received that kind of content rise.
    public var contentTypes: [String]
    /// People identified in the shared content (a custom identifier, contact identifier or handle): conversations
    /// that include them rise.
    public var people: [String]
    /// Only conversations last donated through this service, when set.
    public var serviceName: String?
    /// Conversations that must not be suggested here.
    public var excluded: Set<String>
    /// Conversations whose latest donation is older than this are not suggested (idle conversations).
    public var notIdleSince: Timestamp?

    public init(
        at: Timestamp, limit: Int = 8, contentTypes: [String] = [], people: [String] = [], serviceName: String? = nil,
        excluded: Set<String> = [], notIdleSince: Timestamp? = nil
    ) {
        self.at = at
        self.limit = limit
        self.contentTypes = contentTypes
        self.people = people
        self.serviceName = serviceName
        self.excluded = excluded
        self.notIdleSince = notIdleSince
    }

    /// The distinct content kinds of the shared types, in a stable order.
    public func contentKinds(in tree: UniformTypeTree = .standard) -> [String] {
        tree.contentKinds(of: contentTypes)
    }

    /// The distinct people keys, in a stable order.
    public var distinctPeople: [String] {
        var seen: Set<String> = []
        return people.filter { seen.insert($0).inserted }
    }
}
