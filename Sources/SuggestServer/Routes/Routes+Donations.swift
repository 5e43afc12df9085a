import CSystem
import HTTPServer
import SuggestCore
import Synchronization

extension Routes {
    /// One donation, or JSON Lines of them, up to the server's body limit.
    static let donationsBody = Router.Body(
        mediaTypes: ["application/json", "application/x-ndjson"], maximumBytes: nil,
        name: "a donation body (one donation, or JSON Lines)")

    /// `POST /v1/accounts/{account}/donations`: one donation (`application/json`) or JSON Lines
    /// (`application/x-ndjson`, all or nothing). 201 once every donation is committed.
    static let recordDonations: Router.Endpoint = { call in
        let account = try call.accountToWrite()
        try checkQuery(call.request, allowed: [])
        let now = Timestamp.now()
        let body = withoutByteOrderMark(call.request.body)
        // A body of blank lines holds no donation either: it was 201 "recorded 0", where an empty one was 400.
        guard body.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D && $0 != 0x0A }) else {
            throw APIError.badRequest(
                "invalid_donation", "the body holds no donation (it is empty or blank); it must hold one, or JSON Lines")
        }
        let report: ImportReport
        switch mediaType(call.request) {
        case "application/json":
            let donation = try Self.donation(body, line: nil, in: account)
            report = try refusingDonations {
                try call.withStore { store in
                    var report = ImportReport()
                    report.read = 1
                    switch try store.record(donation, now: now) {
                    case .recorded: report.recorded = 1
                    case .duplicate: report.duplicates = 1
                    case .expired: report.expired = 1
                    }
                    return report
                }
            }
        case "application/x-ndjson":
            // At most this many donations: the store sizes its work by it (a request's batch is not an import of
            // millions, and keeps the connection's page cache as it is).
            let expected = body.count(where: { $0 == 0x0A }) + 1
            let options = ImportOptions(now: now, expectedDonations: expected)
            // A batch this large is recorded with working memory of its own (not the group writer's), which glibc
            // keeps when freed, in small blocks: seven such bodies left the server at 1.2 GB resident. Refused or
            // recorded, the heap is trimmed after it (`trimHeap()`).
            defer { if expected >= Self.largeBatchLines && body.count >= Self.largeBatchBytes { Self.trimHeap() } }
            report = try refusingDonations {
                try call.withStore { store in
                    try store.importBatch(body, options: options) { bytes in
                        Result { () throws(InputError) in try Self.donation(bytes, in: account) }
                    }
                }
            }
        default:
            throw unsupportedMediaType(call.request, donationsBody)
        }
        call.api.metrics.donations(recorded: report.recorded, duplicates: report.duplicates)
        return json({ report.write(to: &$0) }, status: .created)
    }

    /// The lines and bytes of a batch past which the heap is trimmed after it: the embedded store records a batch of
    /// 10,000 donations or more on the request's own connection (`SQLiteDonationStore.largeImport`), not the group
    /// writer; a body of that many empty lines is not one.
    static let largeBatchLines = 10_000
    static let largeBatchBytes = 1 << 20

    /// Gives the heap's freed memory back to the system, at most once every few seconds: `malloc_trim` holds each
    /// heap while it walks it (a fifth of a second with 400 MB in small blocks), and other requests that allocate
    /// wait for it, so a client that sends large batches one after another must not stall the others each time.
    static func trimHeap() {
        let now = (ContinuousClock.now - trimClockStart).components.seconds
        let last = lastTrim.load(ordering: .relaxed)
        guard now - last >= 5, lastTrim.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return }
        system_trim_heap()
    }

    /// The moment of the last trim, in whole seconds since `trimClockStart`.
    private static let lastTrim = Atomic<Int64>(-5)
    private static let trimClockStart = ContinuousClock.now

    /// The store's refusal of a donation (a date from the future, a line of a batch) as the route's error.
    static func refusingDonations<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as InputError {
            throw APIError.invalid("invalid_donation", error)
        }
    }

    /// One donation from its JSON, in the route's account: a donation naming another account is refused.
    static func donation(_ bytes: [UInt8], line: Int?, in account: TenantAccount) throws -> Interaction {
        do {
            return try bytes.withUnsafeBufferPointer { buffer throws(InputError) in try donation(buffer, in: account) }
        } catch {
            throw APIError.invalid("invalid_donation", line.map { error.at(line: $0) } ?? error)
        }
    }

    static func donation(_ bytes: UnsafeBufferPointer<UInt8>, in account: TenantAccount) throws(InputError)
        -> Interaction
    {
        var interaction = try Interaction(jsonBytes: bytes, defaultAccount: account.account)
        // Byte for byte, as the store compares accounts.
        guard interaction.account.hasSameBytes(as: account.account) else {
            throw InputError(
                field: "account",
                message: "'\(interaction.account.prefix(60))' differs from the route's account; leave the member out, "
                    + "or post the donation to its own account's route")
        }
        interaction.account = account.storeAccount
        // Measured again as stored, under its tenant's name (`tenant:account`), which `suggest export` of the
        // store writes: an account at the limit was exported past it, and not imported back.
        if bytes.count > Interaction.writtenSizeCheckedAbove && !account.storeAccount.hasSameBytes(as: account.account) {
            try interaction.checkWrittenSize()
        }
        return interaction
    }

    /// `GET /v1/accounts/{account}/donations`: the account's donations as JSON Lines, as `suggest export` writes
    /// them, sent as the client reads them (`Exports`).
    static let exportDonations: Router.Endpoint = { call in
        let account = try call.account()
        try checkQuery(call.request, allowed: [])
        // Sent in chunks: over HTTP/1.0 the close ends the body, and an export cut off would look complete.
        guard call.request.version != .http10 else {
            throw APIError(
                .httpVersionNotSupported, "http_version_not_supported",
                "an export is sent in chunks as it is read; ask with HTTP/1.1 (over HTTP/1.0 an export cut off "
                    + "could not be told from a complete one)")
        }
        // HEAD has no body: no export is made for it (its head is GET's: HTTPServer sends an empty streamed body).
        if call.request.method == .head {
            return HTTPResponse(status: .ok, headers: ["Content-Type": "application/x-ndjson"], streamedBody: .empty())
        }
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": "application/x-ndjson"],
            streamedBody: try call.api.exports.body(of: account, tenants: call.api.tenantCount, pool: call.api.pool))
    }

    /// `DELETE /v1/accounts/{account}/donations?before=DATE`.
    static let deleteDonationsBefore: Router.Endpoint = { call in
        let account = try call.account()
        try checkQuery(call.request, allowed: ["before"])
        guard let text = call.request.queryValue("before") else {
            throw APIError.badRequest(
                "invalid_query",
                "say what to delete: ?before=DATE, or DELETE a conversation, a donation, a group or the account")
        }
        return try delete(.before(try date(text, name: "before")), in: account, call)
    }

    /// `DELETE /v1/accounts/{account}/donations/{identifier}`.
    static let deleteDonation: Router.Endpoint = { call in
        let account = try call.account()
        try checkQuery(call.request, allowed: [])
        return try delete(.identifier(try call.parameter("identifier", code: "invalid_identifier")), in: account, call)
    }

    /// `DELETE /v1/accounts/{account}/groups/{groupIdentifier}`.
    static let deleteGroup: Router.Endpoint = { call in
        let account = try call.account()
        try checkQuery(call.request, allowed: [])
        let group = try call.parameter("groupIdentifier", code: "invalid_group_identifier")
        return try delete(.groupIdentifier(group), in: account, call)
    }

    /// `DELETE /v1/accounts/{account}`: every donation of the account, and its preferences.
    static let deleteAccount: Router.Endpoint = { call in
        let account = try call.account()
        try checkQuery(call.request, allowed: [])
        // The whole account goes, its blocks too, in the deletion itself (`suggest delete --all` keeps blocks, the
        // person's standing choice).
        return try delete(.account, in: account, call)
    }

    /// Runs a deletion and answers with its report, in the tenant's names.
    static func delete(_ selector: DeletionSelector, in account: TenantAccount, _ call: Call) throws -> HTTPResponse {
        let report = try call.withStore { store in try store.delete(selector, account: account.storeAccount) }
        return json { report.write(to: &$0, account: account.account) }
    }
}
