import HTTPServer
import SuggestCore

extension Routes {
    /// `GET /v1/accounts/{account}/suggestions`: as `suggest list --json`; query `limit`, `contentType`
    /// (repeatable), `person` (repeatable), `service`, `exclude` (repeatable), `at`, `explain`.
    static let suggestions: Router.Endpoint = { call in
        let account = try call.account()
        let request = call.request
        try checkQuery(
            request, allowed: ["limit", "contentType", "person", "service", "exclude", "at", "explain"],
            repeatable: ["contentType", "person", "exclude"])
        let context = try rankingContext(request)
        let explain = try flag(request, "explain")
        let list = try call.withStore { store in
            try store.suggestions(account: account.storeAccount, context: context, explain: explain)
        }
        // The account as the key's tenant names it; the rest as the store answered (its rendering included).
        var shown = list
        shown.account = account.account
        return json { shown.write(to: &$0) }
    }

    /// The ranking context of a query's items (`limit`, `contentType`, `person`, `service`, `exclude`, `at`).
    /// - Throws: `APIError` 400 for a value out of its range or over the query limits the command line enforces.
    static func rankingContext(_ request: HTTPRequest) throws -> RankingContext {
        var context = RankingContext(at: Timestamp.now().atExportPrecision)
        if let limit = request.queryValue("limit") {
            guard limit.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(limit),
                (1...RankingContext.Limits.suggestions).contains(value)
            else {
                throw APIError.badRequest(
                    "invalid_query", "limit: '\(limit.prefix(40))' is not a whole number from 1 to \(RankingContext.Limits.suggestions)")
            }
            context.limit = value
        }
        if let at = request.queryValue("at") { context.at = try date(at, name: "at") }
        context.contentTypes = request.queryValues("contentType")
        context.people = request.queryValues("person")
        context.serviceName = request.queryValue("service")
        context.excluded = Set(request.queryValues("exclude"))
        do {
            try context.validate(
                naming: ["contentTypes": "contentType", "people": "person", "excluded": "exclude", "serviceName": "service"])
        } catch {
            throw APIError.invalid("invalid_query", error)
        }
        return context
    }

    /// A Boolean query item: absent is false; `true`, `1` or no value is true; `false` or `0` is false.
    static func flag(_ request: HTTPRequest, _ name: String) throws -> Bool {
        guard let value = request.queryValue(name) else { return false }
        switch value {
        case "", "true", "1": return true
        case "false", "0": return false
        default: throw APIError.badRequest("invalid_query", "\(name): '\(value.prefix(40))' is not true or false")
        }
    }
}
