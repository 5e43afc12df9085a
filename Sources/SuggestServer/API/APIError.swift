import HTTPServer
import SuggestCore

/// A refused request: its status, a stable code a client can switch on, and one line for a person. Written as the
/// contract's `{"error": {"code": "invalid_donation", "message": "line 3: date: ..."}}`. A refused request changes
/// nothing.
struct APIError: Error, Sendable, Equatable {
    var status: HTTPStatus
    var code: String
    var message: String
    /// Extra header fields (`Allow` for 405, `WWW-Authenticate` for 401).
    var headers: HTTPHeaders = HTTPHeaders()

    init(_ status: HTTPStatus, _ code: String, _ message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    var response: HTTPResponse {
        var response = HTTPResponse.error(status: status, code: code, message: message)
        for header in headers { response.headers.set(name: header.name, value: header.value) }
        return response
    }

    static func notFound(_ what: String) -> APIError { APIError(.notFound, "not_found", what) }

    static func badRequest(_ code: String, _ message: String) -> APIError { APIError(.badRequest, code, message) }

    /// The error for invalid input, under `code` (`invalid_donation`, `invalid_query`, `invalid_share`).
    static func invalid(_ code: String, _ error: InputError) -> APIError { APIError(.badRequest, code, error.description) }

    /// What a store's failure is for a client: never its own fault, and 503, the contract's one status for the
    /// server's side (a retry may find the store back, or another instance): `store_unavailable` when it may pass by
    /// itself, `store_full`, and `store_failed` when it needs an operator.
    ///
    /// The message says what kind of failure it is and no more: the store's own words name its files and nodes
    /// (paths, addresses), which are the operator's business, not a tenant's. The operator finds them in the
    /// access log's line for the request (`storeError`, `AccessLog.Entry`), under the `X-Request-Id` the client got.
    static func store(_ error: StoreError) -> APIError {
        let logged = " (the server's log has the store's own words, under this request's X-Request-Id)"
        // Not "retry later": a client that did would record again what has no identifier.
        if error.mayHaveBeenRecorded {
            return APIError(
                .serviceUnavailable, "store_outcome_unknown",
                "the store's reply was lost: the change may have been made all the same; a retry records each "
                    + "donation that has an identifier once, and again each one that has none, and repeats any other "
                    + "change harmlessly but a \"suggest less\"" + logged)
        }
        let what = error.isFileSizeLimit ? "the store reached the server's limit on file size" : describe(error.kind)
        switch error.kind {
        case .busy:
            return APIError(.serviceUnavailable, "store_unavailable", what + "; retry in a moment")
        case .unavailable:
            return APIError(.serviceUnavailable, "store_unavailable", what + "; retry later" + logged)
        case .diskFull:
            return APIError(.serviceUnavailable, "store_full", what + logged)
        case .noSuchStore, .notADirectory, .notAStore, .foreignDatabase, .newerSchema, .readOnly, .misconfigured,
            .failed:
            return APIError(.serviceUnavailable, "store_failed", what + logged)
        }
    }

    /// A store's failure in words that name none of its files or nodes.
    static func describe(_ kind: StoreError.Kind) -> String {
        switch kind {
        case .busy: "the store is busy with other writes"
        case .unavailable: "the store cannot be reached now"
        case .diskFull: "the store is full (its disk, or its servers' memory)"
        case .noSuchStore, .notADirectory: "the store is gone: deleted or moved from under the server"
        case .notAStore, .foreignDatabase: "the store's files are damaged, or not a store's"
        case .newerSchema: "the store was written by a newer suggest"
        case .readOnly: "the store cannot be written"
        case .misconfigured:
            "the store's servers are set up so that suggest cannot work on them (durability, eviction or a user's "
                + "permissions: the server's log says which)"
        case .failed: "the store failed"
        }
    }
}
