import HTTPServer
import SuggestCore
import SuggestShare

extension Routes {
    /// A share request's body: one JSON object, small.
    static let shareBody = Router.Body(
        mediaTypes: ["application/json"], maximumBytes: ShareRequest.maximumJSONBytes, name: "a share request")

    /// `POST /v1/accounts/{account}/share`: the share flow (`ShareFlow`) with the rule given inline. The body is
    /// `ShareFlow.Request`'s, with the ranking context in it too (`limit`, `at`, `people`, `service`, `exclude`,
    /// `explain`), and `identifier` for a send that may be retried; the result is `suggest share --json`'s. A
    /// `send` that cannot send is 400 `invalid_share`, with the reason, and records nothing.
    static let share: Router.Endpoint = { call in
        let account = try call.accountToWrite()
        try checkQuery(call.request, allowed: [])
        let body = try jsonBody(call.request, code: "invalid_share", shareBody)
        let request: ShareFlow.Request
        var context = RankingContext(at: Timestamp.now().atExportPrecision)
        var explain = false
        do throws(InputError) {
            request = try ShareFlow.Request(json: body)
            context = request.ranking.applied(to: context)
            explain = request.ranking.explain ?? false
            try context.validate(naming: ShareFlow.Request.Ranking.fieldNames)
            // Before the rule is asked, as `suggest share --json` checks it: a send without a choice is the body's
            // mistake whatever the items (it was refused as "the target does not apply").
            if request.action == .send && request.choice == .none {
                throw InputError(
                    field: "action",
                    message: "sending needs the chosen conversation: give conversationIdentifier or pick")
            }
        } catch {
            throw APIError.invalid("invalid_share", error)
        }
        let result = try call.withStore { store in
            do {
                return try ShareFlow(target: request.target).run(
                    request.items, choice: request.choice, action: request.action, account: account.storeAccount,
                    context: context, in: store, explain: explain, identifier: request.identifier)
            } catch let error as InputError {
                // The flow's own refusals of what the body gave (a rule too costly on these items).
                throw APIError.invalid("invalid_share", error)
            }
        }
        // A send that sent nothing (no conversation chosen, a pick past the suggestions, a deleted conversation, a
        // rule that refuses the items) is refused as `suggest share --send` fails it, not answered 200 "preview".
        // With the result's reason (which part of the rule refused the items), which the command line prints in
        // its result and a 400 would otherwise lose.
        if let failure = result.failure {
            let reason = result.reason.map { failure.contains($0) ? "" : " (\($0))" } ?? ""
            throw APIError.badRequest("invalid_share", failure + reason)
        }
        if case .sent = result.outcome {
            let recorded = result.wasRecordedBefore ? 0 : 1
            call.api.metrics.donations(recorded: recorded, duplicates: 1 - recorded)
        }
        return json { result.write(to: &$0) }
    }
}
