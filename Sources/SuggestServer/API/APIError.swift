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
    static func store(_ error: StoreError) -> APIError {
        switch error.kind {
        case .busy, .unavailable:
            return APIError(.serviceUnavailable, "store_unavailable", error.message + "; retry later")
        case .diskFull:
            return APIError(.serviceUnavailable, "store_full", error.message)
        case .noSuchStore, .notADirectory, .notAStore, .foreignDatabase, .newerSchema, .readOnly, .misconfigured,
            .failed:
            return APIError(.serviceUnavailable, "store_failed", error.message)
        }
    }
}
