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

    /// Forgets an account that has no conversation and no preference left: its counters, learned weights, state
    /// stamp, identifiers and dates, in one step, so that no other client's write falls between the check and the
    /// deletion. It only deletes, so it runs at `maxmemory` too.
    ///
    /// KEYS: `cid`, `pref`, then the keys to delete. Returns 1 when it forgot the account, 0 when something is left.
    static let forgetAccount = RedisScript(
        """
        #!lua flags=allow-oom
        if redis.call('HLEN', KEYS[1]) > 0 or redis.call('HLEN', KEYS[2]) > 0 then return 0 end
        for i = 3, #KEYS do redis.call('UNLINK', KEYS[i]) end
        return 1
        """)

    /// Sets fields of the store's settings, at `maxmemory` too (a plain `HSET` is refused there): a few bytes, which
    /// a full node must take for what frees room to go on (a shorter retention, the rewrite a deletion owes).
    ///
    /// KEYS: the settings. ARGV: field, value, field, value...
    static let setSettings = RedisScript(
        """
        #!lua flags=allow-oom
        redis.call('HSET', KEYS[1], unpack(ARGV))
        return 1
        """)

    /// Adds an account's name to the list of accounts, at `maxmemory` too: a full node that holds the list refused
    /// every new writer's first donation, whatever room the account's own node had, and the name that a deletion
    /// takes out and puts back when a preference keeps the account, so that the deletion failed for good.
    ///
    /// KEYS: the list of accounts. ARGV: the name.
    static let listAccount = RedisScript(
        """
        #!lua flags=allow-oom
        return redis.call('SADD', KEYS[1], ARGV[1])
        """)

    /// Forgets the numbers of conversations that have no hash: each identifier's, if `cid` still maps it to the
    /// number given and that number's hash does not exist, in one step, so that a hash written meanwhile keeps its
    /// number. It only deletes, so it runs at `maxmemory` too.
    ///
    /// KEYS: `cid`, then one conversation hash for each identifier. ARGV: for each, its identifier and number.
    /// Returns how many were forgotten.
    static let forgetNumbers = RedisScript(
        """
        #!lua flags=allow-oom
        local forgotten = 0
        for i = 2, #KEYS do
          local identifier = ARGV[2 * i - 3]
          if redis.call('HGET', KEYS[1], identifier) == ARGV[2 * i - 2] and redis.call('EXISTS', KEYS[i]) == 0 then
            redis.call('HDEL', KEYS[1], identifier)
            forgotten = forgotten + 1
          end
        end
        return forgotten
        """)

    /// Applies one change to an account (a batch's donations across its conversations, or the rewrite of one
    /// conversation), after checking that nobody changed what it was computed from: each checked hash (a
    /// conversation's, the account's learned weights) still has the version the change was read at, and the
    /// donations it appends come after the hash's last one; no identifier being recorded is there already. Then runs
    /// the change's operations, in order; they give every checked hash they do not delete its next version
    /// (`ScriptBuilder.check`).
    ///
    /// A change first looks at the account's write lease (`WriteLease`): while another writer holds it, it
    /// changes nothing and answers `LEASED`. A person's deletions and an import's undoing ignore it until they hold it.
    ///
    /// KEYS: `ids`, `sv`, `lease`, then the keys the checks and operations name (by their index in KEYS).
    /// ARGV: the lease (empty: ignore it; `-`: a change that holds none; else the token of the change that holds
    /// it, which it gives back when it runs); how many hashes to check, then for each its key's index, its expected
    /// version (`0`: no hash yet) and the first sequence number of the donations appended (0 for none; the hash's
    /// last one, field `ls`, must be below it); how many identifiers to check, the identifiers; how many conversation numbers to check, then for
    /// each the index of the `cid` key, a conversation identifier and the number it must still map to (a conversation
    /// created by the change: an import's undo may have forgotten a number between its reservation and this write);
    /// then the operations, each on one key `k`, most of them for `n` elements at once (one command for all of a
    /// key's elements, in slices of 512):
    ///   `Z k n (score member)...` ZADD, `L k n (score member)...` ZADD LT, `z k n member...` ZREM,
    ///   `S k n member...` SADD, `s k n member...` SREM, `H k n (field value)...` HSET, `h k n field...` HDEL,
    ///   `R k n value...` RPUSH; `N k field value` HSETNX, `D k` DEL, `V k` HINCRBY k v 1 (a hash the change
    ///   invalidates without depending on it), `T k value` SET (the account's state stamp).
    /// Returns `OK`, `CONFLICT` (changed meanwhile: read it again), `DUPLICATE` (an identifier arrived
    /// meanwhile) or `LEASED` (another writer holds the lease: wait, and read it again).
    static let apply = RedisScript("#!lua\n" + applySource)

    /// `apply` for undoing a failed import: it runs even when the server is at its `maxmemory` (it mostly deletes),
    /// where `apply` is refused.
    static let applyAllowingOOM = RedisScript("#!lua flags=allow-oom\n" + applySource)

    private static let applySource = """
        local lease = ARGV[1]
        local holder = false
        if lease ~= '' then
          holder = redis.call('GET', KEYS[3])
          if holder and holder ~= lease then return 'LEASED' end
        end
        local hashes = tonumber(ARGV[2])
        local p = 3
        for c = 1, hashes do
          local key = KEYS[tonumber(ARGV[p])]
          local version = redis.call('HGET', key, 'v') or '0'
          if version ~= ARGV[p + 1] then return 'CONFLICT' end
          local first = tonumber(ARGV[p + 2])
          if first > 0 then
            local last = tonumber(redis.call('HGET', key, 'ls') or '0')
            if last >= first then return 'CONFLICT' end
          end
          p = p + 3
        end
        local checks = tonumber(ARGV[p])
        for i = 1, checks do
          if redis.call('HEXISTS', KEYS[1], ARGV[p + i]) == 1 then return 'DUPLICATE' end
        end
        p = p + checks + 1
        local numbers = tonumber(ARGV[p])
        for i = 0, numbers - 1 do
          local q = p + 1 + 3 * i
          if redis.call('HGET', KEYS[tonumber(ARGV[q])], ARGV[q + 1]) ~= ARGV[q + 2] then return 'CONFLICT' end
        end
        p = p + 3 * numbers + 1
        -- Every command the writes below may run, asked before the first of them: Redis takes back nothing of a
        -- script that fails midway, and a user without one (its ACL) kept a donation's identifier and names with
        -- no donation. (Asked of the account's first key, with arguments of each command's shape.)
        for _, asked in ipairs({
          {'ZADD', '0', 'm'}, {'ZREM', 'm'}, {'SADD', 'm'}, {'SREM', 'm'}, {'HSET', 'f', 'v'}, {'HDEL', 'f'},
          {'RPUSH', 'v'}, {'HSETNX', 'f', 'v'}, {'DEL'}, {'HINCRBY', 'f', '1'}, {'SET', 'v'},
        }) do
          if not redis.acl_check_cmd(asked[1], KEYS[1], unpack(asked, 2)) then
            return redis.error_reply('NOPERM this user has no permissions to run the ' .. asked[1] .. ' command')
          end
        end
        -- Runs one command on `key` for `n` elements of `width` arguments each, from ARGV[first], in slices that
        -- Lua's stack holds; returns the place after them.
        local function many(command, option, key, first, n, width)
          for i = 0, n - 1, 512 do
            local from = first + width * i
            local to = from + width * math.min(512, n - i) - 1
            if option then redis.call(command, key, option, unpack(ARGV, from, to))
            else redis.call(command, key, unpack(ARGV, from, to)) end
          end
          return first + width * n
        end
        local variadic = {
          Z = {'ZADD', false, 2}, L = {'ZADD', 'LT', 2}, z = {'ZREM', false, 1}, S = {'SADD', false, 1},
          s = {'SREM', false, 1}, H = {'HSET', false, 2}, h = {'HDEL', false, 1}, R = {'RPUSH', false, 1},
        }
        while p <= #ARGV do
          local op = ARGV[p]
          local key = KEYS[tonumber(ARGV[p + 1])]
          local form = variadic[op]
          if form then p = many(form[1], form[2], key, p + 3, tonumber(ARGV[p + 2]), form[3])
          elseif op == 'N' then redis.call('HSETNX', key, ARGV[p + 2], ARGV[p + 3]); p = p + 4
          elseif op == 'D' then redis.call('DEL', key); p = p + 2
          elseif op == 'V' then redis.call('HINCRBY', key, 'v', 1); p = p + 2
          elseif op == 'T' then redis.call('SET', key, ARGV[p + 2]); p = p + 3
          else return redis.error_reply('unknown operation ' .. op) end
        end
        if holder then redis.call('DEL', KEYS[3]) end
        return 'OK'
        """

    /// Takes (or renews) an account's write lease for a recording that keeps losing to other writers
    /// (`WriteLease`), unless another writer holds it.
    ///
    /// KEYS: `lease`. ARGV: the token, the lease's length in milliseconds. Returns 0 when the lease is this token's
    /// now, else how many milliseconds the other writer's lease has left. A lease without an expiry, which no
    /// client of this store sets (one set by hand), is given a lease's length: else it would keep the account's
    /// writers waiting for as long as it stays. It runs at `maxmemory` too: a deletion on a full node may need the
    /// lease, and it is a few bytes for a few seconds.
    static let takeLease = RedisScript(
        """
        #!lua flags=allow-oom
        local holder = redis.call('GET', KEYS[1])
        if holder and holder ~= ARGV[1] then
          local left = redis.call('PTTL', KEYS[1])
          if left < 0 then
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return tonumber(ARGV[2])
          end
          return math.max(left, 1)
        end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return 0
        """)

    /// Gives back a write lease this token holds (a recording that failed before its change ran). It only deletes,
    /// so it runs at `maxmemory` too.
    ///
    /// KEYS: `lease`. ARGV: the token.
    static let giveBackLease = RedisScript(
        """
        #!lua flags=allow-oom
        if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
        return 0
        """)

    /// Reads what random access needs of several conversations, with their preferences and latest intents (what a
    /// suggestion shows, read here so that the top K need no round trip of their own), in one round trip.
    ///
    /// KEYS: `pref`, then the conversations' hashes. Returns, for each, `candidateFields` values: its identifier,
    /// its record, its preference and its latest intent (each `nil` when missing).
    static let candidates = RedisScript(
        """
        #!lua flags=no-writes
        local out = {}
        for i = 2, #KEYS do
          local fields = redis.call('HMGET', KEYS[i], 'id', 'r', 'i')
          local preference = false
          if fields[1] then preference = redis.call('HGET', KEYS[1], fields[1]) end
          out[#out + 1] = fields[1]
          out[#out + 1] = fields[2]
          out[#out + 1] = preference
          out[#out + 1] = fields[3]
        end
        return out
        """)

    /// How many values `candidates` returns for each conversation.
    static let candidateFields = 4

    /// Changes one conversation's preference atomically, and the account's state stamp with it.
    ///
    /// KEYS: `pref`, `sv`. ARGV: the conversation identifier, then `block`, `unblock`, `less`, `reset` (forget
    /// "suggest less") or `forget-less` (the same, when the conversation's last donation was deleted), then a new
    /// stamp. The value is `BLOCKED,LESS`; a preference with neither is removed. Returns the "suggest less" count
    /// now.
    static let preference = RedisScript("#!lua\n" + preferenceSource)

    /// `preference` for the changes that only take away (`unblock`, `reset`, `forget-less`): they run at
    /// `maxmemory` too, so that a full node can still forget what a person asked to forget, and a deletion there
    /// takes its "suggest less" with it.
    static let preferenceAllowingOOM = RedisScript("#!lua flags=allow-oom\n" + preferenceSource)

    /// Whether a preference operation only takes away.
    static func onlyTakesAway(_ operation: String) -> Bool {
        ["unblock", "reset", "forget-less", "unless"].contains(operation)
    }

    private static let preferenceSource =
        """
        local op = ARGV[2]
        if op == 'unless' and redis.call('GET', KEYS[2]) ~= ARGV[4] then return -1 end
        redis.call('SET', KEYS[2], ARGV[3])
        local value = redis.call('HGET', KEYS[1], ARGV[1]) or '0,0'
        local comma = string.find(value, ',', 1, true)
        local blocked = string.sub(value, 1, comma - 1)
        local less = tonumber(string.sub(value, comma + 1))
        if op == 'block' then blocked = '1'
        elseif op == 'unblock' then blocked = '0'
        elseif op == 'less' then less = less + 1
        elseif op == 'unless' then if less > 0 then less = less - 1 end
        elseif op == 'reset' or op == 'forget-less' then less = 0
        else return redis.error_reply('unknown preference operation ' .. op) end
        if blocked == '0' and less == 0 then redis.call('HDEL', KEYS[1], ARGV[1])
        else redis.call('HSET', KEYS[1], ARGV[1], blocked .. ',' .. less) end
        return less
        """

    /// The `preference` script's command for one change of a conversation's preference.
    /// - Parameters:
    ///   - stamp: the account's new state stamp.
    ///   - undoing: for `unless`, the stamp the "suggest less" it takes back set: it takes back nothing (and
    ///     answers -1) once the account has another, a later change or a failover that lost it, so that it never
    ///     takes back another request's "suggest less".
    static func changePreference(
        _ conversation: String, _ operation: String, keys: RedisKeys, stamp: [UInt8] = StateStamp.next(),
        undoing: [UInt8]? = nil
    ) -> RedisCommand {
        var command = RedisCommand(
            script: onlyTakesAway(operation) ? preferenceAllowingOOM : preference,
            keys: [keys.preferences, keys.stateStamp], arguments: conversation, operation)
        command.append(stamp)
        if let undoing { command.append(undoing) }
        return command
    }
}
