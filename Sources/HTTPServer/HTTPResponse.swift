/// What a handler answers: a status, header fields and the body's bytes, or a body made while it is sent.
///
/// MHD adds `Content-Length` (`Transfer-Encoding: chunked` for a streamed body), `Date` and, when the connection is
/// to close, `Connection: close`; a response must not set `Content-Length` or `Transfer-Encoding` itself (MHD
/// refuses them, and the request is answered 500).
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var status: HTTPStatus
    /// The header fields, in order.
    public var headers: HTTPHeaders
    /// The body's bytes; MHD copies them, so the array may go away as soon as the handler returns.
    public var body: [UInt8]
    /// A body made while it is sent, in place of `body` (which must then be empty); started (`StreamedBody.start`)
    /// by the handler, ended by the server once the response is over.
    public var streamedBody: StreamedBody?

    /// A response.
    /// - Parameters:
    ///   - status: the status code; 200 unless given.
    ///   - headers: the header fields.
    ///   - body: the body's bytes.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is made while it is sent.
    /// - Parameters:
    ///   - status: the status code; 200 unless given.
    ///   - headers: the header fields.
    ///   - streamedBody: the body, started.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), streamedBody: StreamedBody) {
        self.init(status: status, headers: headers)
        self.streamedBody = streamedBody
    }

    /// A JSON document (`Content-Type: application/json`).
    /// - Parameters:
    ///   - text: the JSON text, already serialized.
    ///   - status: the status code; 200 unless given.
    /// - Returns: the response.
    public static func json(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(text.utf8))
    }

    /// Plain text in UTF-8 (`Content-Type: text/plain; charset=utf-8`).
    /// - Parameters:
    ///   - text: the text.
    ///   - status: the status code; 200 unless given.
    ///   - contentType: the media type, for text that is not plain (Prometheus' `text/plain; version=0.0.4`).
    /// - Returns: the response.
    public static func text(
        _ text: String, status: HTTPStatus = .ok, contentType: String = "text/plain; charset=utf-8"
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: Array(text.utf8))
    }

    /// An error in the shape the suggest API uses, `{"error": {"code": CODE, "message": MESSAGE}}`.
    /// - Parameters:
    ///   - status: the status code.
    ///   - code: a stable machine-readable code, such as `invalid_donation`.
    ///   - message: one line for a person: what is wrong and what to do.
    /// - Returns: the response, as JSON.
    public static func error(status: HTTPStatus, code: String, message: String) -> HTTPResponse {
        var text = #"{"error":{"code":"#
        appendJSONString(code, to: &text)
        text += #","message":"#
        appendJSONString(message, to: &text)
        text += "}}"
        return json(text, status: status)
    }

    /// Appends `value` as a JSON string literal (quotes, escapes for `"`, `\` and control characters).
    static func appendJSONString(_ value: String, to text: inout String) {
        text.append("\"")
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text.append("\\\"")
            case "\\": text.append("\\\\")
            case "\n": text.append("\\n")
            case "\r": text.append("\\r")
            case "\t": text.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text.append("\"")
    }
}
