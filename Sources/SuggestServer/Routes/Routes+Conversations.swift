import HTTPServer
import SuggestCore

extension Routes {
    /// `DELETE /v1/accounts/{account}/conversations/{id}`: as `suggest delete --conversation`.
    static let deleteConversation: Router.Endpoint = { call in
        let account = try call.account()
        try checkQuery(call.request, allowed: [])
        return try delete(.conversation(try call.parameter("id", code: "invalid_conversation")), in: account, call)
    }

    /// `PUT /v1/accounts/{account}/conversations/{id}/block`: never suggest it.
    static let block: Router.Endpoint = { call in try setBlocked(true, call) }

    /// `DELETE /v1/accounts/{account}/conversations/{id}/block`: suggest it again.
    static let unblock: Router.Endpoint = { call in try setBlocked(false, call) }

    private static func setBlocked(_ blocked: Bool, _ call: Call) throws -> HTTPResponse {
        let account = try blocked ? call.accountToWrite() : call.account()
        try checkQuery(call.request, allowed: [])
        let conversation = try call.parameter("id", code: "invalid_conversation")
        try call.withStore { store in
            try store.setBlocked(blocked, conversation: conversation, account: account.storeAccount)
        }
        return json { writer in
            writer.beginObject()
            writer.key("conversationIdentifier")
            writer.string(conversation)
            writer.key("blocked")
            writer.bool(blocked)
            writer.endObject()
        }
    }

    /// A feedback body: `{"less": true}` or `{"reset": true}`.
    static let feedbackBody = Router.Body(mediaTypes: ["application/json"], maximumBytes: 4096, name: "a feedback body")

    /// `POST /v1/accounts/{account}/conversations/{id}/feedback`: `{"less": true}` ("Suggest Less") or
    /// `{"reset": true}`.
    static let feedback: Router.Endpoint = { call in
        let account = try call.accountToWrite()
        try checkQuery(call.request, allowed: [])
        let conversation = try call.parameter("id", code: "invalid_conversation")
        let body = try jsonBody(call.request, code: "invalid_feedback", feedbackBody)
        let less = body["less"] == .bool(true)
        let reset = body["reset"] == .bool(true)
        guard case .object(let members) = body, less != reset,
            members.allSatisfy({ ($0.key == "less" || $0.key == "reset") && $0.value != .bool(false) })
        else {
            throw APIError.badRequest("invalid_feedback", "the body must be {\"less\": true} or {\"reset\": true}")
        }
        let times = try call.withStore { store -> Int in
            if less { return try store.suggestLess(conversation: conversation, account: account.storeAccount) }
            try store.resetFeedback(conversation: conversation, account: account.storeAccount)
            return 0
        }
        return json { writer in
            writer.beginObject()
            writer.key("conversationIdentifier")
            writer.string(conversation)
            writer.key("suggestLess")
            writer.integer(times)
            writer.endObject()
        }
    }
}
