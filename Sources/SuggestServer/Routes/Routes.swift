import HTTPServer
import SuggestCore

/// Every route of the API, as the contract lists them; each endpoint lives in a file of its resource
/// (`Routes+Donations.swift`, `Routes+Suggestions.swift`, `Routes+Share.swift`, `Routes+Conversations.swift`,
/// `Routes+Service.swift`).
enum Routes {
    static let all: [Router.Route] = [
        Router.Route(
            "/v1/accounts/{account}/donations", needsKey: true,
            [.post: recordDonations, .get: exportDonations, .delete: deleteDonationsBefore],
            bodies: [.post: donationsBody]),
        Router.Route("/v1/accounts/{account}/donations/{identifier}", needsKey: true, [.delete: deleteDonation]),
        Router.Route("/v1/accounts/{account}/suggestions", needsKey: true, [.get: suggestions]),
        Router.Route("/v1/accounts/{account}/share", needsKey: true, [.post: share], bodies: [.post: shareBody]),
        Router.Route("/v1/accounts/{account}/conversations/{id}", needsKey: true, [.delete: deleteConversation]),
        Router.Route(
            "/v1/accounts/{account}/conversations/{id}/block", needsKey: true, [.put: block, .delete: unblock]),
        Router.Route(
            "/v1/accounts/{account}/conversations/{id}/feedback", needsKey: true, [.post: feedback],
            bodies: [.post: feedbackBody]),
        Router.Route("/v1/accounts/{account}/groups/{groupIdentifier}", needsKey: true, [.delete: deleteGroup]),
        Router.Route("/v1/accounts/{account}", needsKey: true, [.delete: deleteAccount]),
        Router.Route("/v1/health/live", needsKey: false, [.get: live]),
        Router.Route("/v1/health/ready", needsKey: false, [.get: ready]),
        Router.Route("/v1/version", needsKey: false, [.get: version]),
        Router.Route("/v1/openapi.json", needsKey: false, [.get: openAPI]),
        Router.Route("/metrics", needsKey: false, [.get: metrics]),
    ]

    // MARK: What several endpoints share

    /// Refuses, from its head, a request whose body its route would refuse whatever it holds: a route or method that
    /// takes none (413), a media type it does not read (415), a declared length over its limit (413).
    /// - Parameter declared: the declared length, `nil` for a chunked body.
    static func checkBodyHead(_ request: HTTPRequest, template: String, body: Router.Body?, declared: Int?) throws {
        guard let body else {
            throw APIError(
                .contentTooLarge, "body_too_large",
                "\(AccessLog.printableMethod(request.method.rawValue)) \(template) takes no body; "
                    + "send the request without one")
        }
        try check(request, against: body, length: declared)
    }

    /// Refuses a body over its rule's limit (413) or of a media type it does not read (415): from the head's
    /// declared length, or from the body read.
    /// - Parameter length: the body's length, `nil` when not known yet (a chunked body's head).
    static func check(_ request: HTTPRequest, against body: Router.Body, length: Int?) throws {
        if let maximum = body.maximumBytes, let length, length > maximum {
            throw APIError(
                .contentTooLarge, "body_too_large", "\(body.name) is at most \(maximum) bytes; this one is \(length)")
        }
        guard let type = mediaType(request), body.mediaTypes.contains(type) else {
            throw unsupportedMediaType(request, body)
        }
    }

    /// The 415 for a body of a media type its route does not read.
    static func unsupportedMediaType(_ request: HTTPRequest, _ body: Router.Body) -> APIError {
        let expected =
            body.mediaTypes.count == 1
            ? body.mediaTypes[0] : body.mediaTypes.dropLast().joined(separator: ", ") + " or " + body.mediaTypes.last!
        return APIError(
            .unsupportedMediaType, "unsupported_media_type",
            "\(body.name) must be \(expected); got " + String((request.headers["content-type"] ?? "no Content-Type").prefix(60)))
    }

    /// Where a ranking context too long for a query goes: a GET has no body, the share route's preview has one.
    static let longerInABody = "a longer context goes in the body of a share request (POST .../share, action preview)"

    /// The query items a route takes, each at most once unless `repeatable`; any other is refused, so that a typo
    /// (`contentTypes=`) is an error rather than a silently ignored filter.
    static func checkQuery(_ request: HTTPRequest, allowed: Set<String>, repeatable: Set<String> = []) throws {
        var seen: Set<String> = []
        // Only a ranking context (the suggestions route's) has a longer form elsewhere.
        func elsewhere() -> String { allowed.contains("exclude") ? "; " + Self.longerInABody : "" }
        for item in request.queryItems {
            guard item.value.utf8.count <= queryValueBytes else {
                throw APIError.badRequest(
                    "invalid_query", "\(item.name.prefix(60)) is longer than \(queryValueBytes) bytes\(elsewhere())")
            }
            guard allowed.contains(item.name) else {
                let known = allowed.sorted().joined(separator: ", ")
                throw APIError.badRequest(
                    "invalid_query", "unknown query parameter '\(item.name.prefix(60))'"
                        + (known.isEmpty ? "; this route takes none" : "; this route takes \(known)"))
            }
            guard seen.insert(item.name).inserted || repeatable.contains(item.name) else {
                throw APIError.badRequest("invalid_query", "\(item.name) may be given only once")
            }
            guard request.queryItems.count(where: { $0.name == item.name }) <= repeatedValues else {
                throw APIError.badRequest(
                    "invalid_query", "\(item.name.prefix(60)) is given more than \(repeatedValues) times\(elsewhere())")
            }
        }
    }

    /// The longest value of one query item: identifiers in a query are short (a type, a person's key, a
    /// conversation to leave out), and every byte of a target counts against the connection's header limit.
    static let queryValueBytes = 256

    /// The most values one repeatable query item may have (`contentType`, `person`, `exclude`): a longer list goes
    /// in a share request's body.
    static let repeatedValues = 32

    /// A date as the contract writes them: RFC 3339 with a zone, or Unix seconds in plain decimal.
    static func date(_ text: String, name: String) throws -> Timestamp {
        guard let date = Timestamp(contractText: text) else {
            throw APIError.badRequest(
                "invalid_query", "\(name): '\(text.prefix(60))' is not a date; use RFC 3339 with a zone (2026-11-30T09:00:00Z) or Unix seconds")
        }
        guard Timestamp.acceptedRange.contains(date) else {
            throw APIError.badRequest(
                "invalid_query", "\(name): " + Timestamp.outOfRangeMessage("'\(text.prefix(60))'", seconds: Double(text)))
        }
        // At a stored date's precision, as the command line takes it (`ValueParsing.date`).
        return date.atExportPrecision
    }

    /// The media type of the request's body, without parameters, lowercased.
    static func mediaType(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["content-type"] else { return nil }
        let type = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? header
        return type.trimmingPrefix(while: { $0 == " " }).lowercased().filter { $0 != " " }
    }

    /// The `charset` parameter of the request's `Content-Type`, unquoted and lowercased, if it has one.
    static func charset(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["content-type"] else { return nil }
        func trimmed(_ text: Substring, _ ends: Set<Character>) -> Substring {
            guard let first = text.firstIndex(where: { !ends.contains($0) }),
                let last = text.lastIndex(where: { !ends.contains($0) })
            else { return "" }
            return text[first...last]
        }
        for parameter in header.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, trimmed(parts[0], [" ", "\t"]).lowercased() == "charset" else { continue }
            return trimmed(trimmed(parts[1], [" ", "\t"]), ["\""]).lowercased()
        }
        return nil
    }

    /// The body as one JSON document of `application/json`, of at most `maximumBytes`: its tree takes tens of times
    /// its size, so a route reads it whole only for bodies it knows to be small.
    static func jsonBody(_ request: HTTPRequest, code: String, _ rule: Router.Body) throws -> JSONValue {
        try check(request, against: rule, length: request.body.count)
        let body = withoutByteOrderMark(request.body)
        guard !body.isEmpty else { throw APIError.badRequest(code, "the body is empty; it must be a JSON object") }
        do {
            return try body.withUnsafeBufferPointer { buffer throws(JSONParser.Error) in
                try JSONParser.parse(bytes: buffer)
            }
        } catch {
            throw APIError.badRequest(code, "the body is not valid JSON: \(error)")
        }
    }

    /// A body without the UTF-8 byte-order mark that editors on Windows put at the start of a file: the command
    /// line drops it from what it reads, so a file that `suggest import` takes is a body the server takes.
    static func withoutByteOrderMark(_ body: [UInt8]) -> [UInt8] {
        body.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(body.dropFirst(3)) : body
    }

    /// A JSON document as a 200 (or other) response.
    static func json(_ write: (inout JSONWriter) -> Void, status: HTTPStatus = .ok) -> HTTPResponse {
        // A top-8 of suggestions is about 2.6 KB.
        var writer = JSONWriter(capacity: 4_096)
        write(&writer)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: writer.bytes)
    }
}
