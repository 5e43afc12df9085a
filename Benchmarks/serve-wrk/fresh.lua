-- GETs that no kept answer can serve: each request excludes a conversation no other request names
-- (`exclude=fresh-<thread>-<n>`, a conversation the store does not have), so the ranking is the same as the plain
-- query's but every request is a new context, ranked and written anew (RankedAnswers keeps answers per context).
-- What a server pays when every query differs, or when a write comes between every two queries.
--
--   wrk -t1 -c32 -d10s --latency -s Benchmarks/serve-wrk/fresh.lua 'URL?limit=8'

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

local sequence = 0
local tid_prefix

function init(args)
   tid_prefix = "&exclude=fresh-" .. tostring(tid or 0) .. "-"
end

function request()
   sequence = sequence + 1
   return wrk.format("GET", wrk.path .. tid_prefix .. sequence)
end
