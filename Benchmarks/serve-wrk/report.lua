-- One machine-readable line at the end of a wrk run, so that serve-benchmark.sh need not parse wrk's own text
-- (whose units change with the magnitude: us, ms, s). Times are in microseconds.
--
--   wrk -t1 -c32 -d10s --latency -s Benchmarks/serve-wrk/report.lua URL
--
-- The donation scripts load this file and add their own counters (what the server acknowledged) to the line.

-- Each thread's counters, gathered by done(); the donation scripts fill `counters` with names to collect.
threads = {}
counters = counters or {}

function setup(thread)
   thread:set("tid", #threads + 1)
   table.insert(threads, thread)
end

-- The line: `wrk-result key=value ...`. `requests` counts responses wrk read whole, of any status.
function report(summary, latency)
   local seconds = summary.duration / 1e6
   local e = summary.errors
   local fields = {
      string.format("requests=%d", summary.requests),
      string.format("seconds=%.3f", seconds),
      string.format("rps=%.1f", summary.requests / seconds),
      string.format("p50_us=%d", latency:percentile(50)),
      string.format("p90_us=%d", latency:percentile(90)),
      string.format("p99_us=%d", latency:percentile(99)),
      string.format("max_us=%d", latency.max),
      string.format("non2xx=%d", e.status),
      string.format("socket_errors=%d", e.connect + e.read + e.write + e.timeout),
      string.format("bytes=%d", summary.bytes),
   }
   for _, name in ipairs(counters) do
      local total = 0
      for _, thread in ipairs(threads) do total = total + (thread:get(name) or 0) end
      table.insert(fields, string.format("%s=%d", name, total))
   end
   io.write("wrk-result ", table.concat(fields, " "), "\n")
end

function done(summary, latency, requests)
   report(summary, latency)
end
