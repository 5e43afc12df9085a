import CSystem
import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// Asks every node (masters and replicas) to rewrite its append-only file, and to write a new snapshot when it
    /// keeps them, so that deleted values leave the nodes' files as well as their memory.
    ///
    /// A rewrite already under way may have begun before the deletion (its copy of the data may hold what was
    /// deleted), so it does not count: a node busy with one is asked again until a rewrite starts after the
    /// deletion, this one's or another client's (a deletion that another deletion's rewrite follows needs no fork
    /// of its own, so a burst of deletions shares the rewrites). The nodes are asked together, for up to 5 seconds
    /// in all; a node still busy then is noted (`files.rewrite` in the settings) and asked again by the next
    /// maintenance step.
    /// - Parameter slowLogs: whose entries to take out of the nodes' slow logs (`emptySlowLogs`): none for
    ///   maintenance's expiry and owed rewrites, which run every few seconds and would leave an operator no slow
    ///   log to read.
    /// - Returns: whether every node started (or scheduled) a rewrite that follows the deletion.
    /// - Throws: `.misconfigured` when the Redis user may not run a rewrite (its ACL), noted as a busy node is:
    ///   the deletion is done, but its bytes stay in that node's files until the user may. It was reported as a
    ///   node busy or down, retried by every later command, and the deleted names stayed in the files for good.
    func rewriteFiles(slowLogs: SlowLogScope = .none) throws(StoreError) -> Bool {
        guard let nodes = try? client.nodes() else {
            // Owed all the same: the next maintenance step asks again once the nodes can be listed.
            if let unnoted = noteFileRewrites(done: false) { throw Self.rewriteNotOwed(unnoted) }
            return false
        }
        // The snapshot too, whatever the node's `save` setting: a replica's full resync writes one even under
        // `save ""`, with what was deleted since in it.
        var requests = nodes.flatMap { node in FileRewrite.allCases.map { RewriteRequest(node: node, kind: $0) } }
        let deadline = ContinuousClock.now + .seconds(5)
        while requests.contains(where: { $0.state == .asking }) && ContinuousClock.now < deadline {
            for index in requests.indices where requests[index].state == .asking { ask(&requests[index]) }
            if requests.contains(where: { $0.state == .asking }) {
                var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
                _ = nanosleep(&pause, nil)
            }
        }
        let done = requests.allSatisfy { $0.state == .started }
        let unnoted = noteFileRewrites(done: done)
        // Not the nodes found down just now: each would cost the connection's timeout again. (A node that refused a
        // rewrite, where a managed service disables it, may still empty its slow log.)
        let answering = nodes.filter { node in
            !requests.contains { $0.node.endpoint == node.endpoint && $0.unreachable }
        }
        let slowLogRefusal = emptySlowLogs(of: answering, naming: slowLogs)
        if let refused = requests.first(where: { $0.refusal != nil }), let message = refused.refusal {
            var error = StoreError(
                .misconfigured,
                "deleted, but the Redis user may not run \(refused.kind.command.name) on \(refused.node.endpoint) "
                    + "(\(message.prefix(100))), so what was deleted stays in that node's files: give the user the "
                    + "permissions in docs/redis.md, \"A user of its own\"; "
                    + (unnoted.map { "then run BGREWRITEAOF and BGSAVE on every node: the note that owes the rewrite "
                        + "could not be written (\($0.message))" }
                        ?? "the next deletion or maintenance step rewrites them then"))
            error.leftDeletedBytesUnnoted = unnoted != nil
            throw error
        }
        if let unnoted { throw Self.rewriteNotOwed(unnoted) }
        if let (node, message) = slowLogRefusal {
            throw StoreError(
                .misconfigured,
                "deleted, but the Redis user may not run SLOWLOG (GET and RESET) on \(node.endpoint) "
                    + "(\(message.prefix(100))), so names of what was deleted may stay in that node's slow log until "
                    + "newer slow commands push them out: give the user the permissions in docs/redis.md, \"A user of "
                    + "its own\"")
        }
        return done
    }

    /// Whose entries a deletion takes out of the nodes' slow logs.
    enum SlowLogScope {
        /// None (maintenance).
        case none
        /// Those that name the account: its keys, or its name alone (`sg:accounts`' members).
        case account(RedisKeys)
        /// Those that name any key of suggest's (`delete --everything`, a retention change).
        case everyAccount
    }

    /// Empties, best effort, the slow log of every node whose log names what `scope` says. A node keeps the first
    /// 32 arguments (128 bytes of each) of every command slower than `slowlog-log-slower-than` (10 ms by default)
    /// in memory, the latest 128 by default, where `SLOWLOG GET` shows them: an import's scripts name the account
    /// and its person keys (a person's address), which would stay there after the deletion left the files clean
    /// (`delete --everything` included). A log that names them is emptied whole (Redis takes out no
    /// single entry), other accounts' entries with it; one that does not is left to the operator.
    /// - Returns: a node that refused for want of the permission, and Redis's answer; other failures (a node down,
    ///   `SLOWLOG` renamed away) are left alone: the log is memory, and newer commands push the entries out.
    private func emptySlowLogs(of nodes: [RedisNode], naming scope: SlowLogScope) -> (RedisNode, String)? {
        // An entry (a command's arguments) that names what was deleted: one of its keys holds the account's escaped
        // prefix, within the 128 bytes a logged argument keeps; or it is a command on the list of accounts, and the
        // name is one of its arguments (whole, or cut at 128 bytes). Not any string that holds the name, nor any
        // argument equal to it: a short name such as "1" is in every log's client addresses, script hashes and
        // counts, and emptied every node's log.
        let names: ([[UInt8]]) -> Bool
        switch scope {
        case .none: return nil
        case .account(let keys):
            let prefix = Array(Array(keys.prefix.utf8).prefix(100))
            let name = Array(keys.account.utf8)
            let accounts = Array(RedisKeys.accounts.utf8)
            names = { arguments in
                arguments.contains { $0.firstRange(of: prefix) != nil }
                    || (arguments.contains(accounts)
                        && arguments.contains { $0 == name || (name.count > 100 && $0.starts(with: name.prefix(100))) })
            }
        case .everyAccount:
            let prefix = Array("sg:".utf8)
            names = { arguments in arguments.contains { $0.firstRange(of: prefix) != nil } }
        }
        var refusal: (RedisNode, String)?
        for node in nodes {
            do {
                let log = try client.send(RedisCommand("SLOWLOG", "GET", -1), to: node.endpoint)
                guard Self.entries(of: log).contains(where: names) else { continue }
                _ = try client.send(RedisCommand("SLOWLOG", "RESET"), to: node.endpoint)
            } catch {
                if case .server(_, let message) = error, Self.permissionDenied(message) != nil, refusal == nil {
                    refusal = (node, message)
                }
            }
        }
        return refusal
    }

    /// The arguments of each entry of a `SLOWLOG GET` reply (an entry is its id, time, duration, arguments, client
    /// address and name).
    private static func entries(of log: RedisValue) -> [[[UInt8]]] {
        guard case .array(let entries) = log else { return [] }
        return entries.map { entry in
            guard case .array(let fields) = entry, fields.count > 3, case .array(let arguments) = fields[3] else {
                return []
            }
            return arguments.compactMap(\.bytes)
        }
    }

    /// Notes in the settings whether a rewrite of the nodes' files is still owed (`files.rewrite`), for the next
    /// maintenance step.
    /// - Returns: why the note could not be written, when a rewrite is owed: nothing else would ask for it, and the
    ///   deleted bytes would stay in the nodes' files while the deletion said the next upkeep removes them (the
    ///   caller says so, after the more specific refusals). A rewrite done whose note stays costs one more rewrite:
    ///   not an error.
    private func noteFileRewrites(done: Bool) -> StoreError? {
        forgetSettings()
        guard !done else {
            _ = try? write([RedisCommand("HDEL", key: RedisKeys.settings, "files.rewrite")])
            return nil
        }
        // On the master is enough (no replica need confirm it): the note is the same however often it is written.
        let note = RedisCommand(
            script: RedisScripts.setSettings, keys: [RedisKeys.settings], arguments: "files.rewrite", "1")
        do {
            _ = try Self.refusingErrors(try writeReplicated([note]).replies)
        } catch {
            return error
        }
        return nil
    }

    /// The error for a rewrite owed that could not be noted (`noteFileRewrites`), which nothing would ask for again.
    private static func rewriteNotOwed(_ unnoted: StoreError) -> StoreError {
        var error = StoreError(
            unnoted.kind,
            "deleted, but not every Redis node could rewrite its append-only file and snapshot now, and the note that "
                + "the store's upkeep owes them a rewrite could not be written (\(unnoted.message)): what was deleted "
                + "stays in those files until they are rewritten, by the next deletion or by BGREWRITEAOF and BGSAVE "
                + "on every node")
        error.leftDeletedBytesUnnoted = true
        return error
    }

    /// The two files of a node that hold its data: the append-only file and the snapshot.
    private enum FileRewrite: CaseIterable {
        case appendOnlyFile, snapshot

        var command: RedisCommand {
            switch self {
            case .appendOnlyFile: RedisCommand("BGREWRITEAOF")
            case .snapshot: RedisCommand("BGSAVE", "SCHEDULE")
            }
        }

        /// The field of `INFO persistence` that counts the node's rewrites of this file, raised as each one starts.
        var startsField: String {
            switch self {
            case .appendOnlyFile: "aof_rewrites"
            case .snapshot: "rdb_saves"
            }
        }
    }

    /// One node's rewrite of one file after a deletion.
    private struct RewriteRequest {
        enum State { case asking, started, failed }
        let node: RedisNode
        let kind: FileRewrite
        var state = State.asking
        /// Redis's answer when the user may not run the rewrite (`NOPERM`): the state is `.failed`.
        var refusal: String?
        /// Whether the node could not be reached, or did not answer: the state is `.failed`.
        var unreachable = false
        /// How many rewrites of the file the node had started when one was first found under way: one more means a
        /// rewrite began after that, so after the deletion.
        var startsSeen: Int?
    }

    /// Asks for the rewrite once: `.started` when it started or was scheduled, or another rewrite started after
    /// the deletion; still `.asking` while one that may predate the deletion is under way (counted the first time);
    /// `.failed` on any other answer.
    private func ask(_ request: inout RewriteRequest) {
        // Greater, not different: a count that went down was reset (CONFIG RESETSTAT, a restarted node), which says
        // nothing of a rewrite since.
        if let seen = request.startsSeen, let now = startsSoFar(request), now > seen {
            request.state = .started
            return
        }
        do {
            _ = try client.send(request.kind.command, to: request.node.endpoint)
            request.state = .started
        } catch {
            guard case .server(_, let message) = error, message.contains("already in progress") else {
                request.state = .failed
                switch error {
                case .unreachable, .connectionLost, .timeout: request.unreachable = true
                default: break
                }
                if case .server(_, let message) = error, Self.permissionDenied(message) != nil {
                    request.refusal = message
                }
                return
            }
            // Counted after the refusal: the rewrite under way is in the count, any later one raises it.
            if request.startsSeen == nil { request.startsSeen = startsSoFar(request) }
        }
    }

    /// The node's count of rewrites of the request's file (`INFO persistence`), or `nil` when it cannot be read.
    private func startsSoFar(_ request: RewriteRequest) -> Int? {
        guard let info = try? client.send(RedisCommand("INFO", "persistence"), to: request.node.endpoint).string
        else { return nil }
        let prefix = request.kind.startsField + ":"
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix(prefix) {
            return Int(line.dropFirst(prefix.count))
        }
        return nil
    }
}
