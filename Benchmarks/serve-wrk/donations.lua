-- Donations for `POST /v1/accounts/default/donations`, each with an identifier no other request of any run uses,
-- so that every one must be recorded (none is a duplicate), in one of two forms:
--
--   wrk -t1 -c4 -d10s --latency -s Benchmarks/serve-wrk/donations.lua URL -- TAG batch 1000 [zipf|uniform]
--       JSON Lines bodies (application/x-ndjson) of 1000 donations each
--   wrk -t1 -c8 -d10s --latency -s Benchmarks/serve-wrk/donations.lua URL -- TAG single 1 [zipf|uniform]
--       one donation per request (application/json)
--
-- URL is the donations route, for example http://127.0.0.1:PORT/v1/accounts/default/donations. TAG makes the
-- identifiers of this run unique (serve-benchmark.sh passes the start time, the round and the server's setup);
-- a thread adds its number and a counter.
--
-- The donations look like those of `suggest-bench generate` (about 330 bytes: a direct conversation c-N of the
-- 100k, one recipient with an e-mail handle, a service, both directions), dated one second before the request is
-- built, since the store refuses donations from the future. The conversation is drawn, as the generator draws
-- it, by a Zipf law of exponent 1 over the 100k (`zipf`, the default: the popular ones recur, a third of the
-- donations go to 30 conversations, half to 300), or uniformly (`uniform`: nearly every donation of a batch
-- touches another conversation, the worst case for the store).
--
-- Each response's {"recorded": N, "duplicates": M} is summed: the run's line reports what the server
-- acknowledged, and serve-benchmark.sh checks it against the store's count.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
counters = { "recorded", "duplicates", "created" }
dofile(here .. "report.lua")

local CONVERSATIONS = 100000
local tag, mode, batch, draw
local sequence = 0
recorded, duplicates, created = 0, 0, 0

-- cumulative[k] = 1/1 + 1/2 + ... + 1/k; a draw is a binary search for a uniform point below the total.
local cumulative = {}
local function zipf()
   local u = math.random() * cumulative[CONVERSATIONS]
   local low, high = 1, CONVERSATIONS
   while low < high do
      local middle = math.floor((low + high) / 2)
      if cumulative[middle] < u then low = middle + 1 else high = middle end
   end
   return low - 1
end
local function uniform() return math.random(0, CONVERSATIONS - 1) end

function init(args)
   tag = args[1] or tostring(os.time())
   mode = args[2] or "single"
   batch = tonumber(args[3] or "1000")
   local law = args[4] or "zipf"
   if mode ~= "single" and mode ~= "batch" then error("mode must be single or batch, not " .. mode) end
   if law == "zipf" then
      local sum = 0
      for k = 1, CONVERSATIONS do sum = sum + 1 / k; cumulative[k] = sum end
      draw = zipf
   elseif law == "uniform" then
      draw = uniform
   else
      error("the conversations' law must be zipf or uniform, not " .. law)
   end
   -- Seeded per thread: the same run sends the same conversations.
   math.randomseed(1000 + (tid or 1))
end

local template = '{"identifier":"%s-%d-%d","date":%d,"direction":"%s","intent":{"conversationIdentifier":"c-%d",'
   .. '"serviceName":"chat.example","sender":{"customIdentifier":"me","isMe":true},'
   .. '"recipients":[{"customIdentifier":"p-%d","displayName":"Person %d",'
   .. '"personHandle":{"value":"p%d@example.com","type":"emailAddress"}}]}}'

local function donation(date)
   sequence = sequence + 1
   local conversation = draw()
   local direction = (sequence % 2 == 0) and "outgoing" or "incoming"
   return string.format(template, tag, tid or 1, sequence, date, direction, conversation, conversation,
      conversation, conversation)
end

function request()
   local date = os.time() - 1
   if mode == "single" then
      return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, donation(date))
   end
   local lines = {}
   for i = 1, batch do lines[i] = donation(date) end
   lines[batch + 1] = ""
   return wrk.format("POST", nil, { ["Content-Type"] = "application/x-ndjson" }, table.concat(lines, "\n"))
end

function response(status, headers, body)
   if status == 201 then
      created = created + 1
      recorded = recorded + tonumber(body:match('"recorded"%s*:%s*(%d+)') or "0")
      duplicates = duplicates + tonumber(body:match('"duplicates"%s*:%s*(%d+)') or "0")
   end
end
