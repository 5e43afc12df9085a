import RedisCluster

/// The Lua scripts the store runs on the node that holds an account's slot. Each runs atomically, and touches only
/// keys it is given (so that a slot being migrated answers `ASK` or `TRYAGAIN` rather than half of them). Each
/// starts with a `#!lua` line, so that Redis checks its memory limit once, before the script runs: without one, a
/// script that crossed `maxmemory` half-way would stop with half of its writes done.
enum RedisScripts {
    /// Finds (or gives) each conversation identifier its number, and reserves sequence numbers.
    ///
    /// KEYS: `cid`, `m`. ARGV: how many sequence numbers to reserve, then the conversation identifiers.
    /// Returns the last reserved sequence number (0 when none was asked), then each identifier's number.
    static let numbers = RedisScript(
        """
        #!lua
        local out = {}
        local reserve = tonumber(ARGV[1])
        if reserve > 0 then out[1] = redis.call('HINCRBY', KEYS[2], 'seq', reserve) else out[1] = 0 end
        for i = 2, #ARGV do
          local number = redis.call('HGET', KEYS[1], ARGV[i])
          if not number then
            number = redis.call('HINCRBY', KEYS[2], 'next', 1)
            redis.call('HSET', KEYS[1], ARGV[i], number)
          end
          out[i] = tonumber(number)
        end
        return out
        """)

    /// Applies the changes of several conversations of one account, each after checking that nobody changed its
    /// conversation meanwhile: its version is the one the change was computed from, no identifier it records is
    /// there already, and the donations it appends come after the conversation's last one. A change that fails a
    /// check is skipped whole, and the others go on.
    ///
    /// KEYS: the account's `ids` hash first, then every key the changes name (by their index in KEYS, `k` below).
    /// ARGV: the number of changes, then each change: its form (`G` or `R`), how many arguments follow in it, the
    /// index of its conversation's hash, the expected version (`0`: no hash yet), the first sequence number of the
    /// donations it appends (0 for none; the conversation's last one, field `ls`, must be below it), then:
    ///
    /// - `G`, any change (a rewrite, a removal): how many identifiers to check, the identifiers, then operations
    ///   until the change's end: `Z k score member` ZADD, `L k score member` ZADD LT, `z k member` ZREM,
    ///   `S k member` SADD, `s k member` SREM, `H k field value` HSET, `N k field value` HSETNX, `h k field` HDEL,
    ///   `D k` DEL, `R k count value...` RPUSH.
    /// - `R`, donations recorded, in a third of the arguments: the conversation's number (the member of every set
    ///   below), the number n of donations, their n identifiers (checked, then set to the number in `ids`), the
    ///   donations list's `k` and the n entries to append, the number of hash fields and their `field value`
    ///   pairs, the snapshots hash's `k`, the number of snapshots and their `key body` pairs (HSETNX), the number
    ///   of sorted sets and their `k score` pairs, the number of sorted sets to leave and their `k`s, the number of
    ///   sets to join and their `k`s, then the `k` and score of the ZADD LT of the oldest donation.
    ///
    /// A change that applies sets its conversation's version one higher (unless it deleted the hash).
    ///
    /// The calls are what costs: the script keeps every ZADD, ZREM, SADD, SREM, HSET and HDEL of one key and runs
    /// them as one command when another kind of operation on that key, or the end, comes (same order, same
    /// result): the changes of a few hundred conversations make one ZADD per sorted set and one HSET of the `ids`
    /// hash, not one each.
    ///
    /// Returns one status per change in order, `OK`, `CONFLICT` (changed meanwhile: read it again) or `DUPLICATE` (an
    /// identifier arrived meanwhile). A call that fails part-way (a damaged key of the wrong type) returns the
    /// statuses of the changes it began, then `!` and Redis's message: those changes may be written in part.
    static let apply = RedisScript("#!lua\n" + applySource)

    /// `apply` for undoing a failed import: it runs even when the server is at its `maxmemory` (it mostly deletes),
    /// where `apply` is refused.
    static let applyAllowingOOM = RedisScript("#!lua flags=allow-oom\n" + applySource)

    private static let applySource = """
        local statuses = {}
        local pending = {}
        local touched = {}
        local known = {}
        local written = {}
        local function flush(k)
          local p = pending[k]
          if p == nil then return end
          pending[k] = nil
          local kind, args, key = p[1], p[2], KEYS[k]
          for i = 1, #args, 1024 do
            local j = math.min(i + 1023, #args)
            if kind == 'Z' then redis.call('ZADD', key, unpack(args, i, j))
            elseif kind == 'L' then redis.call('ZADD', key, 'LT', unpack(args, i, j))
            elseif kind == 'z' then redis.call('ZREM', key, unpack(args, i, j))
            elseif kind == 'S' then redis.call('SADD', key, unpack(args, i, j))
            elseif kind == 's' then redis.call('SREM', key, unpack(args, i, j))
            elseif kind == 'H' then redis.call('HSET', key, unpack(args, i, j))
            else redis.call('HDEL', key, unpack(args, i, j)) end
          end
        end
        local function later(kind, k, a, b)
          local p = pending[k]
          if p ~= nil and p[1] ~= kind then flush(k); p = nil end
          if p == nil then
            p = {kind, {}}
            pending[k] = p
            touched[#touched + 1] = k
          end
          local args = p[2]
          args[#args + 1] = a
          if b ~= nil then args[#args + 1] = b end
          if k == 1 then
            if kind == 'H' then written[a] = true elseif kind == 'h' then written[a] = nil; known[a] = nil end
          end
        end
        local function rpush(k, from, n)
          for i = 0, n - 1, 512 do
            redis.call('RPUSH', KEYS[k], unpack(ARGV, from + i, from + math.min(i + 511, n - 1)))
          end
        end
        local function operations(c, q, stop)
          local deleted = false
          while q < stop do
            local op = ARGV[q]
            local k = tonumber(ARGV[q + 1])
            if op == 'Z' or op == 'L' or op == 'H' then later(op, k, ARGV[q + 2], ARGV[q + 3]); q = q + 4
            elseif op == 'z' or op == 'S' or op == 's' or op == 'h' then later(op, k, ARGV[q + 2]); q = q + 3
            elseif op == 'N' then
              flush(k)
              redis.call('HSETNX', KEYS[k], ARGV[q + 2], ARGV[q + 3])
              q = q + 4
            elseif op == 'D' then
              flush(k)
              redis.call('DEL', KEYS[k])
              if k == c then deleted = true end
              if k == 1 then known = {}; written = {} end
              q = q + 2
            elseif op == 'R' then
              flush(k)
              local n = tonumber(ARGV[q + 2])
              rpush(k, q + 3, n)
              q = q + 3 + n
            else error('unknown operation ' .. op) end
          end
          return deleted
        end
        local function recorded(c, q, version)
          local member = ARGV[q]
          local n = tonumber(ARGV[q + 1])
          local ids = pending[1]
          if ids ~= nil and ids[1] ~= 'H' then flush(1); ids = nil end
          if ids == nil then
            ids = {'H', {}}
            pending[1] = ids
            touched[#touched + 1] = 1
          end
          local args = ids[2]
          local m = #args
          for i = q + 2, q + 1 + n do
            local identifier = ARGV[i]
            args[m + 1] = identifier
            args[m + 2] = member
            m = m + 2
            written[identifier] = true
          end
          q = q + 2 + n
          local k = tonumber(ARGV[q])
          flush(k)
          rpush(k, q + 1, n)
          q = q + 1 + n
          local fields = tonumber(ARGV[q])
          flush(c)
          redis.call('HSET', KEYS[c], 'v', version, unpack(ARGV, q + 1, q + 2 * fields))
          q = q + 1 + 2 * fields
          k = tonumber(ARGV[q])
          flush(k)
          for i = q + 2, q + 1 + 2 * tonumber(ARGV[q + 1]), 2 do redis.call('HSETNX', KEYS[k], ARGV[i], ARGV[i + 1]) end
          q = q + 2 + 2 * tonumber(ARGV[q + 1])
          for i = q + 1, q + 2 * tonumber(ARGV[q]), 2 do later('Z', tonumber(ARGV[i]), ARGV[i + 1], member) end
          q = q + 1 + 2 * tonumber(ARGV[q])
          for i = q + 1, q + tonumber(ARGV[q]) do later('z', tonumber(ARGV[i]), member) end
          q = q + 1 + tonumber(ARGV[q])
          for i = q + 1, q + tonumber(ARGV[q]) do later('S', tonumber(ARGV[i]), member) end
          q = q + 1 + tonumber(ARGV[q])
          later('L', tonumber(ARGV[q]), ARGV[q + 1], member)
        end
        local function run()
          local count = tonumber(ARGV[1])
          local identifiers = {}
          local p = 2
          for s = 1, count do
            local from, n = p + 7, tonumber(ARGV[p + 6])
            if ARGV[p] == 'G' then from, n = p + 6, tonumber(ARGV[p + 5]) end
            for i = from, from + n - 1 do identifiers[#identifiers + 1] = ARGV[i] end
            p = p + 2 + tonumber(ARGV[p + 1])
          end
          for i = 1, #identifiers, 1024 do
            local j = math.min(i + 1023, #identifiers)
            local found = redis.call('HMGET', KEYS[1], unpack(identifiers, i, j))
            for x = 1, #found do if found[x] then known[identifiers[i + x - 1]] = true end end
          end
          p = 2
          for s = 1, count do
            local form = ARGV[p]
            local stop = p + 2 + tonumber(ARGV[p + 1])
            local c = tonumber(ARGV[p + 2])
            local expected = ARGV[p + 3]
            local first = tonumber(ARGV[p + 4])
            local from, n = p + 7, tonumber(ARGV[p + 6])
            if form == 'G' then from, n = p + 6, tonumber(ARGV[p + 5]) end
            flush(c)
            local state = redis.call('HMGET', KEYS[c], 'v', 'ls')
            local status = 'OK'
            if (state[1] or '0') ~= expected then status = 'CONFLICT'
            elseif first > 0 and tonumber(state[2] or '0') >= first then status = 'CONFLICT'
            else
              for i = from, from + n - 1 do
                if known[ARGV[i]] or written[ARGV[i]] then status = 'DUPLICATE'; break end
              end
            end
            statuses[s] = status
            if status == 'OK' then
              local version = tostring(tonumber(expected) + 1)
              if form == 'R' then
                recorded(c, p + 5, version)
              elseif not operations(c, from + n, stop) then
                later('H', c, 'v', version)
              end
            end
            p = stop
          end
          for _, k in ipairs(touched) do flush(k) end
        end
        local ok, failure = pcall(run)
        if not ok then
          if type(failure) == 'table' then failure = failure.err or failure.ok end
          statuses[#statuses + 1] = '!' .. tostring(failure)
        end
        return statuses
        """

    /// Reads what random access needs of several conversations, with their preferences, in one round trip.
    ///
    /// KEYS: `pref`, then the conversations' hashes. Returns, for each: its identifier, its record and its
    /// preference (each `nil` when missing).
    static let candidates = RedisScript(
        """
        #!lua flags=no-writes
        local out = {}
        for i = 2, #KEYS do
          local fields = redis.call('HMGET', KEYS[i], 'id', 'r')
          local preference = false
          if fields[1] then preference = redis.call('HGET', KEYS[1], fields[1]) end
          out[#out + 1] = fields[1]
          out[#out + 1] = fields[2]
          out[#out + 1] = preference
        end
        return out
        """)

    /// Changes one conversation's preference atomically.
    ///
    /// KEYS: `pref`. ARGV: the conversation identifier, then `block`, `unblock`, `less`, `reset` (forget "suggest
    /// less") or `forget-less` (the same, when the conversation's last donation was deleted). The value is
    /// `BLOCKED,LESS`; a preference with neither is removed. Returns the "suggest less" count now.
    static let preference = RedisScript(
        """
        #!lua
        local value = redis.call('HGET', KEYS[1], ARGV[1]) or '0,0'
        local comma = string.find(value, ',', 1, true)
        local blocked = string.sub(value, 1, comma - 1)
        local less = tonumber(string.sub(value, comma + 1))
        local op = ARGV[2]
        if op == 'block' then blocked = '1'
        elseif op == 'unblock' then blocked = '0'
        elseif op == 'less' then less = less + 1
        elseif op == 'reset' or op == 'forget-less' then less = 0
        else return redis.error_reply('unknown preference operation ' .. op) end
        if blocked == '0' and less == 0 then redis.call('HDEL', KEYS[1], ARGV[1])
        else redis.call('HSET', KEYS[1], ARGV[1], blocked .. ',' .. less) end
        return less
        """)
}
