/// What the ranker knows of the moment of a query: when it is, what is being shared, who is in it, and what may
/// not be suggested.
public struct RankingContext: Sendable, Hashable {
    /// The moment of the query. A policy's constant weights decay the scores to it; an account's learned weights
    /// give scores that do not change with it (each is a share of its channel's mass, in which the moment cancels
    /// out: docs/ranking.md). Either way the ranking is of the donations recorded so far, whatever their dates.
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
    /// Conversations that must not be suggested here, compared byte for byte with the stored identifiers (as
    /// every identifier is: `café` composed and `café` decomposed are two conversations). A `Set` keeps one of two
    /// canonically equivalent spellings, so one context cannot exclude both such conversations.
    public var excluded: Set<String>
    /// Conversations whose latest donation is older than this are not suggested (idle conversations).
    public var notIdleSince: Timestamp?

    /// A context; nothing is checked until `validate()`.
    /// - Parameters:
    ///   - at: the moment the scores are taken at.
    ///   - limit: how many suggestions to return, 1 to `Limits.suggestions`.
    ///   - contentTypes: uniform type identifiers of what is being shared.
    ///   - people: identifiers of the people in the shared content.
    ///   - serviceName: only conversations last donated through this service, when set.
    ///   - excluded: conversation identifiers that must not be suggested.
    ///   - notIdleSince: leave out conversations whose latest donation is older; `nil` keeps them all.
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

    /// The distinct people keys, in a stable order; told apart by their bytes, as the stores match them (a set of
    /// `String`s took `josé` composed and decomposed for one, and dropped the second).
    public var distinctPeople: [String] {
        var seen: Set<ByteKey> = []
        return people.filter { seen.insert(ByteKey($0)).inserted }
    }

    /// What one query may ask for. Each bound keeps a query's cost independent of the history: a content kind or a
    /// person adds lists or look-ups to the walk, an excluded conversation may have to be walked past.
    public enum Limits {
        /// Suggestions per query (`--limit`, `limit=`).
        public static let suggestions = 1000
        /// Distinct content types per query: a share of a thousand photos has one.
        public static let contentTypes = 32
        /// Distinct people per query.
        public static let people = 32
        /// Excluded conversations per query: a share sheet hides the few it shows elsewhere (each may cost the walk a
        /// step past it).
        public static let excluded = 100
        /// Bytes of any one identifier or type, as for a donation's strings.
        public static let stringBytes = 4096
    }

    /// Checks the context against `Limits`.
    /// - Throws: `InputError` naming the part of the context (`limit`, `at`, `contentTypes`, `people`, `excluded`,
    ///   `serviceName`) and the bound it crosses: a limit outside 1 to `Limits.suggestions`, a moment outside
    ///   `Timestamp.acceptedRange`, a content type that is no uniform type identifier, too many distinct values,
    ///   an empty or over-long string.
    public func validate() throws(InputError) {
        guard (1...Limits.suggestions).contains(limit) else {
            throw InputError(field: "limit", message: "\(limit) is not from 1 to \(Limits.suggestions)")
        }
        // Finite first: a NaN passes every comparison of the range's (`Timestamp` orders by `<` alone).
        guard at.seconds.isFinite, Timestamp.acceptedRange.contains(at) else {
            throw InputError(field: "at", message: "the moment is outside the years 0001 to 9999")
        }
        if let notIdleSince, !notIdleSince.seconds.isFinite {
            // A NaN cutoff admitted every conversation, as if there were none.
            throw InputError(field: "notIdleSince", message: "is not a finite moment (\(notIdleSince.seconds))")
        }
        for type in contentTypes {
            if let problem = UniformTypeTree.problem(withTypeIdentifier: type) {
                throw InputError(field: "contentTypes", message: problem)
            }
        }
        // Distinct by bytes, as content kinds are (`ContentSums`): by `String ==`, thousands of canonically
        // equivalent spellings of one type counted as one, each a kind of its own to rank by.
        let types = Set(contentTypes.map { ByteKey($0.lowercased()) })
        guard types.count <= Limits.contentTypes else {
            throw InputError(
                field: "contentTypes",
                message: "\(types.count) distinct content types; a query takes at most \(Limits.contentTypes)")
        }
        guard distinctPeople.count <= Limits.people else {
            throw InputError(
                field: "people", message: "\(distinctPeople.count) distinct people; a query takes at most \(Limits.people)")
        }
        guard excluded.count <= Limits.excluded else {
            throw InputError(
                field: "excluded",
                message: "\(excluded.count) excluded conversations; a query takes at most \(Limits.excluded)")
        }
        for (field, values) in [
            ("contentTypes", contentTypes), ("people", people), ("excluded", Array(excluded)),
            ("serviceName", serviceName.map { [$0] } ?? []),
        ] {
            for value in values {
                guard !value.isEmpty else { throw InputError(field: field, message: "must not be empty") }
                guard value.utf8.count <= Limits.stringBytes else {
                    throw InputError(field: field, message: "is longer than \(Limits.stringBytes) bytes")
                }
            }
        }
    }

    /// `validate()`, with the part of the context named as the caller's own words name it: a query's item
    /// (`person`), a command's option (`--person`), a body's member. An error that named `people` for `--person`
    /// sent the reader looking for a field they never wrote.
    /// - Parameter names: the caller's name for each part `validate()` names; a part not in it keeps its name.
    public func validate(naming names: [String: String]) throws(InputError) {
        do {
            try validate()
        } catch {
            var renamed = error
            renamed.field = error.field.map { names[$0] ?? $0 }
            throw renamed
        }
    }
}
