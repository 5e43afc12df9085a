import Synchronization

/// The server's counters, in Prometheus' text format at `/metrics`: requests by route template, method and status
/// (never by raw path: a path holds account names), a latency histogram per route and method, donations recorded and
/// duplicated, store errors by kind, and the requests in flight.
final class Metrics: Sendable {
    /// The upper bounds of the latency buckets, in seconds: from 100 µs (a warm top 8) to 10 s, with steps between
    /// 1 and 10 s, where a deletion's rewrite of a large store lands (a p99 read from 1 and 10 alone said "10 s").
    static let buckets: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private struct Histogram {
        var counts = [Int](repeating: 0, count: Metrics.buckets.count + 1)
        var sum = 0.0
        var total = 0

        mutating func record(bucket: Int, seconds: Double) {
            counts[bucket] += 1
            sum += seconds
            total += 1
        }
    }

    /// A latency histogram's series: one route template answers several methods (a donation's POST, an export's
    /// GET and a deletion's DELETE share `/v1/accounts/{account}/donations`), whose times have nothing in common.
    private struct LatencyKey: Hashable, Comparable {
        var route: String
        var method: String
        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.route, lhs.method) < (rhs.route, rhs.method) }
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [LatencyKey: Histogram] = [:]
        var recorded = 0
        var duplicates = 0
        var storeErrors: [String: Int] = [:]
    }

    private let state = Mutex(State())
    private let inFlight = Atomic(0)
    /// The store's own lines, appended to the server's.
    private let store: SuggestServer.StoreMetrics?
    /// The HTTP server's body counters (`countBodies`).
    private let bodies = Mutex<(@Sendable () -> (held: Int, refused: Int))?>(nil)

    init(store: SuggestServer.StoreMetrics? = nil) {
        self.store = store
    }

    func requestStarted() { inFlight.add(1, ordering: .relaxed) }

    /// The methods counted by name; any other is counted as `other`. HTTP lets a client send any token as a
    /// method, and a series for each would let one client grow `/metrics` without bound: 3,000 requests with
    /// made-up methods made 3,000 series.
    static let methodLabels: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

    /// Counts one finished request.
    func requestFinished(route: String, method: String, status: Int, seconds: Double) {
        inFlight.subtract(1, ordering: .relaxed)
        let bucket = Metrics.buckets.firstIndex { seconds <= $0 } ?? Metrics.buckets.count
        let method = Metrics.methodLabels.contains(method) ? method : "other"
        state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            state.latency[LatencyKey(route: route, method: method), default: Histogram()].record(
                bucket: bucket, seconds: seconds)
        }
    }

    func donations(recorded: Int, duplicates: Int) {
        state.withLock { state in
            state.recorded += recorded
            state.duplicates += duplicates
        }
    }

    func storeError(kind: String) { state.withLock { $0.storeErrors[kind, default: 0] += 1 } }

    /// The exposition text.
    func text() -> String {
        let snapshot = state.withLock { $0 }
        var text = """
            # HELP suggest_http_requests_total HTTP requests answered, by route template, method and status.
            # TYPE suggest_http_requests_total counter

            """
        for (key, count) in snapshot.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            text += "suggest_http_requests_total{route=\"\(key.route)\",method=\"\(key.method)\",status=\"\(key.status)\"} \(count)\n"
        }
        text += """
            # HELP suggest_http_request_duration_seconds Time from a request's arrival to its response, by route template and method.
            # TYPE suggest_http_request_duration_seconds histogram

            """
        for (key, histogram) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            let labels = "route=\"\(key.route)\",method=\"\(key.method)\""
            var cumulative = 0
            for (index, bound) in Metrics.buckets.enumerated() {
                cumulative += histogram.counts[index]
                text += "suggest_http_request_duration_seconds_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
            }
            text += "suggest_http_request_duration_seconds_bucket{\(labels),le=\"+Inf\"} \(histogram.total)\n"
            text += "suggest_http_request_duration_seconds_sum{\(labels)} \(histogram.sum)\n"
            text += "suggest_http_request_duration_seconds_count{\(labels)} \(histogram.total)\n"
        }
        text += """
            # HELP suggest_http_requests_in_flight Requests being answered now.
            # TYPE suggest_http_requests_in_flight gauge
            suggest_http_requests_in_flight \(inFlight.load(ordering: .relaxed))
            # HELP suggest_donations_recorded_total Donations recorded (acknowledged after their commit).
            # TYPE suggest_donations_recorded_total counter
            suggest_donations_recorded_total \(snapshot.recorded)
            # HELP suggest_donations_duplicate_total Donations whose identifier was already recorded: no-ops.
            # TYPE suggest_donations_duplicate_total counter
            suggest_donations_duplicate_total \(snapshot.duplicates)
            # HELP suggest_store_errors_total Store failures, by kind.
            # TYPE suggest_store_errors_total counter

            """
        for (kind, count) in snapshot.storeErrors.sorted(by: { $0.key < $1.key }) {
            text += "suggest_store_errors_total{kind=\"\(kind)\"} \(count)\n"
        }
        if let bodies = bodies.withLock({ $0 }) {
            let (held, refused) = bodies()
            text += """
                # HELP suggest_http_body_bytes_in_memory Bytes of request bodies held now (a declared length counts whole).
                # TYPE suggest_http_body_bytes_in_memory gauge
                suggest_http_body_bytes_in_memory \(held)
                # HELP suggest_http_bodies_refused_total Requests refused with 503 because their bodies did not fit beside the others (--max-body-memory).
                # TYPE suggest_http_bodies_refused_total counter
                suggest_http_bodies_refused_total \(refused)

                """
        }
        if let store { text += store() }
        return text
    }

    /// Reads the HTTP server's body counters for the exposition: the bytes held now and the requests refused for
    /// want of room. Set once the server has started (it is made after the API).
    func countBodies(_ read: @escaping @Sendable () -> (held: Int, refused: Int)) { bodies.withLock { $0 = read } }
}
