# Sourced by serve-benchmark.sh and serve-compare.sh: latencies as `suggest serve` timed them.
#
# wrk's own latencies cannot be trusted for the donation runs: with a script that makes each request
# (serve-wrk/donations.lua) its mean latency times its rate came to several times its connection count (one
# connection: 3.42 ms x 1,709 requests/s = 5.8; wg/wrk#438 reports the same fault). The server's histogram
# (`suggest_http_request_duration_seconds`, from a request's start to its response handed to libmicrohttpd) is read
# before and after a run instead; it gives each percentile as the upper bound of the bucket that holds it.

# route_histogram SERVER ROUTE [METHOD]: the server's own latency histogram of ROUTE (a route template) answering
# METHOD (default POST), from `/metrics`: "upper-bound cumulative-count" lines, in order. A server from before the
# histograms had a method label (serve-compare.sh's older revision) gives its route's one histogram.
route_histogram() {
    curl -sf "$1/metrics" |
        awk -v route="suggest_http_request_duration_seconds_bucket{route=\"$2\"," -v method="method=\"${3:-POST}\"," '
            index($0, route) == 1 {
                rest = substr($0, length(route) + 1)
                if (index(rest, "method=") == 1) { if (index(rest, method) != 1) next; rest = substr(rest, length(method) + 1) }
                if (index(rest, "le=\"") != 1) next
                le = substr(rest, 5); sub(/".*/, "", le); print le, $NF
            }'
}

# server_quantiles BEFORE AFTER: between two histograms of route_histogram, the buckets' upper bounds within which
# half and 99% of the requests were answered, as the server timed them (from the request's start to its response
# handed to libmicrohttpd): "server_p50_us=N server_p99_us=N", -1 past the last bound.
server_quantiles() {
    # A route not yet asked for has no lines before: its counts start at 0.
    awk 'NR == FNR { before[$1] = $2; next } { k++; bound[k] = $1; n[k] = $2 - before[$1] } END {
        total = n[k]
        for (q = 1; q <= 2; q++) {
            share = q == 1 ? 0.5 : 0.99; found = -1
            for (i = 1; i <= k && total > 0; i++) if (n[i] >= share * total) { found = bound[i] == "+Inf" ? -1 : bound[i] * 1e6; break }
            printf "%sserver_p%s_us=%d", q == 1 ? "" : " ", q == 1 ? "50" : "99", found
        }
    }' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

