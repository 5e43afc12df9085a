import SuggestCore

extension ShareFlow {
    /// A whole share request as one JSON document, the body of the server's share route:
    ///
    ///     {"items": [{"attachments": [{"type": "public.jpeg", "file": "photo.jpg"}]}],
    ///      "rule": "SUBQUERY(...).@count == 1", "conversationIdentifier": "thread-42", "action": "send"}
    ///
    /// `items` as `ShareRequest(json:)` reads them; `rule` (optional: a predicate string or the dictionary form as
    /// an object; without it the target accepts anything); `conversationIdentifier` or `pick` (optional, not
    /// both); `action` (`preview`, `send` or `cancel`; default `preview`); and the optional ranking members
    /// `limit`, `at`, `people`, `service`, `exclude`, `explain` (`ranking`); and `identifier` (optional: the sent
    /// donation's, so that a retried send records once).
    public struct Request: Sendable {
        /// The members a share request may have, in the order the documentation gives them.
        public static let memberNames = [
            "items", "rule", "conversationIdentifier", "pick", "action", "identifier", "limit", "at", "people",
            "service", "exclude", "explain",
        ]

        /// What is shared (`items`).
        public var items: ShareRequest
        /// The target the rule describes, supporting `INSendMessageIntent`; `ShareTarget.acceptingAnything`
        /// without a rule.
        public var target: ShareTarget
        /// The conversation chosen (`conversationIdentifier` or `pick`), if any.
        public var choice: Choice
        /// How the request ends.
        public var action: Action
        /// Whether the request gave a `rule` (else `target` accepts anything).
        public var givesRule: Bool
        /// Whether the request gave an `action` (else `action` is `preview`).
        public var givesAction: Bool
        /// The identifier a send records its donation under (`identifier`), so that a retried send records once.
        public var identifier: String?
        /// The ranking members the body gave, each `nil` when absent: `limit`, `at`, `people`, `service`,
        /// `exclude` (the ranking context) and `explain`.
        public var ranking: Ranking

        /// The optional ranking members of a share body, as given.
        public struct Ranking: Sendable, Equatable {
            public var limit: Int?
            public var at: Timestamp?
            public var people: [String]?
            public var serviceName: String?
            public var excluded: [String]?
            public var explain: Bool?

            /// The members' names the body gave, in the body's terms (`limit`, `at`, `people`, `service`,
            /// `exclude`, `explain`).
            public var given: [String] {
                [
                    limit.map { _ in "limit" }, at.map { _ in "at" }, people.map { _ in "people" },
                    serviceName.map { _ in "service" }, excluded.map { _ in "exclude" }, explain.map { _ in "explain" },
                ].compactMap { $0 }
            }

            /// The body's names for the parts of a ranking context that it names otherwise, for
            /// `RankingContext.validate(naming:)`.
            public static let fieldNames = ["excluded": "exclude", "serviceName": "service"]

            /// `context` with the members given in place of its own.
            public func applied(to context: RankingContext) -> RankingContext {
                var context = context
                if let limit { context.limit = limit }
                if let at { context.at = at }
                if let people { context.people = people }
                if let serviceName { context.serviceName = serviceName }
                if let excluded { context.excluded = Set(excluded) }
                return context
            }

            init(json: JSONValue) throws(InputError) {
                if let value = json["limit"], value != .null {
                    guard case .number(let number) = value, number == number.rounded(), number >= 1,
                        number <= Double(RankingContext.Limits.suggestions)
                    else {
                        throw InputError(
                            field: "limit", message: "must be a whole number from 1 to \(RankingContext.Limits.suggestions)")
                    }
                    limit = Int(number)
                }
                // A date as a donation's: RFC 3339 with a zone, or Unix seconds, as `--at` and `?at=` take, at a
                // stored date's precision as they do.
                if let value = json["at"], value != .null {
                    at = try Interaction.parseDate(value, field: "at").atExportPrecision
                }
                people = try Self.strings(json["people"], field: "people")
                excluded = try Self.strings(json["exclude"], field: "exclude")
                if let value = json["service"], value != .null {
                    guard case .string(let name) = value else {
                        throw InputError(field: "service", message: "must be a string")
                    }
                    serviceName = name
                }
                if let value = json["explain"], value != .null {
                    guard case .bool(let flag) = value else {
                        throw InputError(field: "explain", message: "must be true or false")
                    }
                    explain = flag
                }
            }

            private static func strings(_ value: JSONValue?, field: String) throws(InputError) -> [String]? {
                guard let value, value != .null else { return nil }
                guard case .array(let items) = value else {
                    throw InputError(field: field, message: "must be an array of strings")
                }
                var strings: [String] = []
                for (index, item) in items.enumerated() {
                    guard case .string(let text) = item else {
                        throw InputError(field: "\(field)[\(index)]", message: "must be a string")
                    }
                    strings.append(text)
                }
                return strings
            }
        }

        /// Reads a request from JSON text, at most `ShareRequest.maximumJSONBytes` long.
        /// - Throws: `InputError` for text that is not JSON (with its byte position) or not such a request.
        public init(jsonText: String) throws(InputError) {
            try self.init(json: try ShareRequest.parse(jsonText: jsonText))
        }

        /// Reads the request.
        /// - Throws: `InputError` naming the member that is wrong.
        public init(json: JSONValue) throws(InputError) {
            items = try ShareRequest(json: json)
            // The request's own members are checked by name: `"actoin": "send"` was read as no action and
            // answered as a preview, sending nothing (an item's members stay open: its `userInfo` is the host's).
            if let repeated = json.repeatedMemberName {
                // Read by its last value, `"action": "send", "action": "preview"` previewed without a word.
                throw InputError(field: String(repeated.prefix(64)), message: "is given twice; give it once")
            }
            if case .object(let members) = json,
                let unknown = members.first(where: { !Self.memberNames.contains($0.key) })
            {
                throw InputError(
                    field: String(unknown.key.prefix(64)),
                    message: "is not a member of a share request; its members are "
                        + Self.memberNames.joined(separator: ", "))
            }
            if let rule = json["rule"], rule != .null {
                target = ShareTarget(activationRule: try ActivationRule(json: rule), intentsSupported: ["INSendMessageIntent"])
                givesRule = true
            } else {
                target = .acceptingAnything
                givesRule = false
            }
            let conversation = json["conversationIdentifier"]
            let pick = json["pick"]
            switch (conversation, pick) {
            case (nil, nil), (.null?, nil), (nil, .null?), (.null?, .null?):
                choice = .none
            case (.string(let identifier)?, nil), (.string(let identifier)?, .null?):
                // A name no donation can have (over 4096 bytes, a NUL) is refused as every route refuses it, not
                // looked for and echoed back.
                try Interaction.checkName(identifier, field: "conversationIdentifier")
                choice = .conversation(identifier)
            case (nil, .number(let rank)?), (.null?, .number(let rank)?):
                guard rank == rank.rounded(), rank >= 1, rank <= Double(RankingContext.Limits.suggestions) else {
                    throw InputError(field: "pick", message: "must be a whole number from 1 to \(RankingContext.Limits.suggestions)")
                }
                choice = .rank(Int(rank))
            case (let conversation?, nil), (let conversation?, .null?):
                throw InputError(field: "conversationIdentifier", message: "expected a string, found \(conversation.kindName)")
            case (nil, let pick?), (.null?, let pick?):
                throw InputError(field: "pick", message: "expected a number, found \(pick.kindName)")
            default:
                throw InputError(field: "pick", message: "choose with conversationIdentifier or pick, not both")
            }
            ranking = try Ranking(json: json)
            switch json["identifier"] {
            case nil, .null?: identifier = nil
            case .string(let text)?:
                try Interaction.checkName(text, field: "identifier")
                identifier = text
            case let other?: throw InputError(field: "identifier", message: "expected a string, found \(other.kindName)")
            }
            givesAction = json["action"].map { $0 != .null } ?? false
            switch json["action"] {
            case nil, .null?: action = .preview
            case .string(let name)?:
                guard let parsed = Action(rawValue: name) else {
                    throw InputError(field: "action", message: "'\(name.prefix(40))' is not preview, send or cancel")
                }
                action = parsed
            case let other?:
                throw InputError(field: "action", message: "expected preview, send or cancel, found \(other.kindName)")
            }
        }
    }
}
