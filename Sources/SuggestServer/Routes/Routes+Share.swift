import HTTPServer
import SuggestCore
import SuggestShare

extension Routes {
    /// `POST /v1/accounts/{account}/share`: the share flow (`ShareFlow`) with the rule given inline. The body is
    /// `ShareFlow.Request`'s, with the ranking context in it too (`limit`, `at`, `people`, `service`, `exclude`,
    /// `explain`); the result is `suggest share --json`'s. A `send` that cannot send is 400 `invalid_share`, with
    /// the reason, and records nothing.
    static let share: Router.Endpoint = { call in
        let account = try call.account()
        try checkQuery(call.request, allowed: [])
        let body = try jsonBody(
            call.request, code: "invalid_share", maximumBytes: ShareRequest.maximumJSONBytes, what: "a share request")
        let request: ShareFlow.Request
        var context = RankingContext(at: .now())
        var explain = false
        do throws(InputError) {
            request = try ShareFlow.Request(json: body)
            try readContext(body, into: &context, explain: &explain)
            try context.validate()
        } catch {
            throw APIError.invalid("invalid_share", error)
        }
        let result = try call.withStore { store in
            do {
                return try ShareFlow(target: request.target).run(
                    request.items, choice: request.choice, action: request.action, account: account.storeAccount,
                    context: context, in: store, explain: explain)
            } catch let error as InputError {
                // The flow's own refusals of what the body gave (a rule too costly on these items).
                throw APIError.invalid("invalid_share", error)
            }
        }
        // A send that sent nothing (no conversation chosen, a pick past the suggestions, a deleted conversation, a
        // rule that refuses the items) is refused as `suggest share --send` fails it, not answered 200 "preview".
        if let failure = result.failure { throw APIError.badRequest("invalid_share", failure) }
        if case .sent = result.outcome { call.api.metrics.donations(recorded: 1, duplicates: 0) }
        return json { result.write(to: &$0) }
    }

    /// The optional ranking members of a share body.
    private static func readContext(_ body: JSONValue, into context: inout RankingContext, explain: inout Bool)
        throws(InputError)
    {
        if let limit = body["limit"], limit != .null {
            guard case .number(let value) = limit, value == value.rounded(), value >= 1,
                value <= Double(RankingContext.Limits.suggestions)
            else { throw InputError(field: "limit", message: "must be a whole number from 1 to \(RankingContext.Limits.suggestions)") }
            context.limit = Int(value)
        }
        if let at = body["at"], at != .null {
            guard case .string(let text) = at, let date = Timestamp(rfc3339: text) else {
                throw InputError(field: "at", message: "must be an RFC 3339 date with a zone")
            }
            context.at = date
        }
        context.people = try strings(body["people"], field: "people")
        context.excluded = Set(try strings(body["exclude"], field: "exclude"))
        if let service = body["service"], service != .null {
            guard case .string(let name) = service else { throw InputError(field: "service", message: "must be a string") }
            context.serviceName = name
        }
        if let flag = body["explain"], flag != .null {
            guard case .bool(let value) = flag else { throw InputError(field: "explain", message: "must be true or false") }
            explain = value
        }
    }

    private static func strings(_ value: JSONValue?, field: String) throws(InputError) -> [String] {
        guard let value, value != .null else { return [] }
        guard case .array(let items) = value else { throw InputError(field: field, message: "must be an array of strings") }
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
