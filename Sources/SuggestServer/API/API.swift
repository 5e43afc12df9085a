import CSystem
import HTTPServer
import SuggestCore
import Synchronization

/// The suggest HTTP API (the contract's "suggest serve"): every request goes through `answer`, which finds the
/// route, checks the key, runs the endpoint with a store connection of its own, and turns every failure into the
/// contract's JSON error; then counts it and logs it.
final class API: Sendable {
    let configuration: ServerConfiguration
    let pool: StorePool
    let metrics: Metrics
    let log: AccessLog
    let router: Router
    let exports: Exports
    /// `nil` without `--keys`: one tenant, no key.
    private let keys: Mutex<KeyRing?>
    /// Ready once the store answered; not while draining or while the store fails.
    private let state = Mutex(Readiness.starting)

    enum Readiness: Sendable, Equatable {
        case starting
        case ready
        case storeUnavailable(String)
        case draining
    }

    init(
        configuration: ServerConfiguration, keys: KeyRing?, pool: StorePool, log: AccessLog,
        storeMetrics: SuggestServer.StoreMetrics? = nil
    ) {
        metrics = Metrics(store: storeMetrics)
        self.configuration = configuration
        self.keys = Mutex(keys)
        self.pool = pool
        self.log = log
        router = Router(routes: Routes.all)
        exports = Exports(
            limit: configuration.maximumExports, timeLimitSeconds: configuration.exportTimeLimitSeconds)
    }

    /// How many tenants the keys open now (1 without keys).
    var tenantCount: Int {
        keys.withLock { ring in ring?.tenantCount ?? 1 }
    }

    func replaceKeys(_ ring: KeyRing) { keys.withLock { $0 = ring } }

    var readiness: Readiness {
        get { state.withLock { $0 } }
        set { state.withLock { if $0 != .draining { $0 = newValue } } }
    }

    func startDraining() { state.withLock { $0 = .draining } }

    /// Answers one request; called on a worker thread.
    func answer(_ request: HTTPRequest) -> HTTPResponse {
        let started = ContinuousClock.now
        metrics.requestStarted()
        var admission = Admission()
        var response: HTTPResponse
        do {
            let (_, endpoint, parameters) = try admit(request, &admission)
            var call = Call(request: request, parameters: parameters, tenant: admission.tenant, api: self)
            response = try endpoint(&call)
        } catch {
            response = errorResponse(error)
            admission.storeError = (error as? StoreError)?.message
        }
        return finish(request, response, admission, started: started)
    }

    /// Refuses, before its body is read, a request that declares one and would be refused whatever its body says:
    /// no such route, a method the route does not answer, no key or an unknown key, a route that takes no body, a
    /// media type or a declared length its route refuses. `nil` for one that may go on. So a client without a key
    /// cannot make the server hold bodies (up to `maximumBodyBytes` each) in memory, not even on a route that
    /// needs no key.
    func screen(_ request: HTTPRequest) -> HTTPResponse? {
        let started = ContinuousClock.now
        var admission = Admission()
        do {
            let (route, _, _) = try admit(request, &admission)
            let declared = request.headers["content-length"].flatMap { Int($0) }
            try Routes.checkBodyHead(
                request, template: route.template, body: route.bodies[request.method], declared: declared)
            return nil
        } catch {
            metrics.requestStarted()
            return finish(request, errorResponse(error), admission, started: started)
        }
    }

    /// A request the HTTP layer answered before any route saw it (a body over the limit, a framing it cannot
    /// trust, a target that is not one, no room for the body): given its id, counted and logged like any other,
    /// under its route's template when its target names one.
    func refused(_ refusal: HTTPServer.Refusal) -> HTTPResponse {
        metrics.requestStarted()
        var admission = Admission()
        if let head = refusal.head, let (route, _) = router.route(for: head.pathSegments) {
            admission.template = route.template
        }
        return finish(
            method: refusal.method, headers: refusal.headers, refusal.response, admission, started: ContinuousClock.now)
    }

    /// What is known of a request once it is admitted, or as far as its admission went: for the metrics and the
    /// access log.
    private struct Admission {
        var template = "unmatched"
        var tenant: String?
        /// A store failure's own words, for the access log only.
        var storeError: String?
    }

    /// The route's endpoint and path parameters for `request`, after the checks that need no body: the route, the
    /// method and the key.
    private func admit(_ request: HTTPRequest, _ admission: inout Admission) throws -> (
        Router.Route, Router.Endpoint, [String: String]
    ) {
        guard let (route, parameters) = router.route(for: request.pathSegments) else {
            throw APIError.notFound(
                "no route \(AccessLog.printableMethod(request.method.rawValue)) \(String(request.path.prefix(200))); "
                    + "see /v1/openapi.json")
        }
        admission.template = route.template
        guard let endpoint = route.methods[request.method] else {
            throw APIError(
                .methodNotAllowed, "method_not_allowed",
                "\(AccessLog.printableMethod(request.method.rawValue)) is not allowed on \(route.template); allowed: \(route.allow)",
                headers: ["Allow": route.allow])
        }
        if route.needsKey { admission.tenant = try authenticate(request) }
        // A compressed body would reach the parsers as it was sent (RFC 9110, 15.5.16: 415 for a content coding
        // the server does not apply).
        if let coding = request.headers["content-encoding"], !coding.isEmpty, coding.lowercased() != "identity" {
            throw APIError(
                .unsupportedMediaType, "unsupported_media_type",
                "Content-Encoding \(coding.prefix(40)) is not supported: send the body uncompressed")
        }
        // JSON is UTF-8 (RFC 8259, 8.1): a body declared in another charset would be read as if it were UTF-8.
        // (Only bodies are read: POST is the one method of this API that sends one.)
        if request.method == .post, let charset = Routes.charset(request),
            !["utf-8", "utf8", "us-ascii"].contains(charset)
        {
            throw APIError(
                .unsupportedMediaType, "unsupported_media_type",
                "charset \(charset.prefix(40)) is not supported: send the body in UTF-8")
        }
        return (route, endpoint, parameters)
    }

    /// The contract's JSON error for a failure.
    private func errorResponse(_ error: any Error) -> HTTPResponse {
        switch error {
        case let error as APIError:
            return error.response
        case let error as InputError:
            return APIError.invalid("invalid_request", error).response
        case let error as StoreError:
            metrics.storeError(kind: "\(error.kind)")
            return APIError.store(error).response
        default:
            return APIError(.internalServerError, "internal", "the server failed: \(error)").response
        }
    }

    /// `response` with the request's id, counted and logged.
    private func finish(
        _ request: HTTPRequest, _ response: HTTPResponse, _ admission: Admission, started: ContinuousClock.Instant
    ) -> HTTPResponse {
        finish(method: request.method.rawValue, headers: request.headers, response, admission, started: started)
    }

    private func finish(
        method: String, headers: HTTPHeaders, _ response: HTTPResponse, _ admission: Admission,
        started: ContinuousClock.Instant
    ) -> HTTPResponse {
        var response = response
        let requestID = Self.requestID(headers["x-request-id"])
        response.headers.set(name: "X-Request-Id", value: requestID)
        let seconds = Self.seconds(since: started)
        metrics.requestFinished(route: admission.template, method: method, status: response.status.code, seconds: seconds)
        log.record(
            AccessLog.Entry(
                requestID: requestID, method: method, route: admission.template,
                status: response.status.code, seconds: seconds, tenant: admission.tenant,
                bytes: response.streamedBody == nil ? response.body.count : nil, storeError: admission.storeError))
        return response
    }

    /// The tenant of the request's key.
    private func authenticate(_ request: HTTPRequest) throws -> String? {
        guard let ring = keys.withLock({ $0 }) else { return nil }
        let challenge: HTTPHeaders = ["WWW-Authenticate": "Bearer realm=\"suggest\""]
        guard let header = request.headers["authorization"] else {
            throw APIError(.unauthorized, "unauthorized", "this route needs Authorization: Bearer KEY", headers: challenge)
        }
        let scheme = "bearer "
        guard header.utf8.count > scheme.utf8.count,
            String(decoding: header.utf8.prefix(scheme.utf8.count), as: UTF8.self).lowercased() == scheme
        else {
            throw APIError(.unauthorized, "unauthorized", "the Authorization header must be Bearer KEY", headers: challenge)
        }
        // One or more spaces after the scheme (RFC 9110 §11.4's `1*SP`).
        guard let tenant = ring.tenant(forKey: header.utf8.dropFirst(scheme.utf8.count).drop(while: { $0 == 0x20 }))
        else {
            throw APIError(.unauthorized, "unauthorized", "the key is not known", headers: challenge)
        }
        return tenant
    }

    /// Runs `body` with a store connection.
    func withStore<T>(_ body: (any DonationStore) throws -> T) throws -> T { try pool.withStore(body) }

    /// The request's own id when it gives a usable one (`X-Request-Id`, up to 128 letters, digits, `.`, `_`, `-`),
    /// else a new random one.
    static func requestID(_ given: String?) -> String {
        if let given, (1...128).contains(given.utf8.count),
            given.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2E
                    || byte == 0x5F || byte == 0x2D
            })
        {
            return given
        }
        let text = String(freshRequestID(), radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// Counts the ids made, from a random start.
    private static let requestIDs: Atomic<UInt64> = {
        var random = SystemRandomNumberGenerator()
        return Atomic(random.next())
    }()

    /// A new id, different from every other this process made: the next count through SplitMix64's finalizer (a
    /// bijection of 64 bits), so that ids do not look sequential, without a system call for randomness each.
    static func freshRequestID() -> UInt64 {
        var value = requestIDs.wrappingAdd(1, ordering: .relaxed).newValue
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
