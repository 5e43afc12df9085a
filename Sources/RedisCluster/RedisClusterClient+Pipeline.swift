extension RedisClusterClient {
    /// The replies of a run, the node each came from, and the fewest replicas a `WAIT` reported.
    struct Outcome {
        var replies: [RedisValue]
        var repliedBy: [RedisEndpoint?]
        var replicas: Int
        /// Whether every `WAIT` answered; `false` when a connection broke while its master waited.
        var waitsAnswered = true
    }

    /// One node's share of a round: which commands, in order, and whether each follows an `ASK`.
    private struct Batch {
        let endpoint: RedisEndpoint
        let pool: NodePool
        var items: [(index: Int, asking: Bool)] = []
        var connection: RedisConnection?
        var written = false
        var writeError: RedisError?
        /// Every command's reply was read: its `WAIT`'s comes next.
        var repliesRead = false
    }

    /// What a round learned beyond its replies: what to do before the next one.
    private struct Round {
        /// Refresh the layout now: a node failed or a replica said `READONLY` (a failover happened).
        var failover = false
        /// A `MOVED` was followed: refresh, unless another thread did a moment ago.
        var moved = false
        /// Wait before the next round: the cluster asked for patience, or a node is not there.
        var backOff = false
        /// The error to throw if the retry time runs out.
        var lastProblem: RedisError?
        /// An error that ends the run once every connection's replies have been read.
        var fatal: RedisError?
        /// The last redirection, for ``RedisError/tooManyRedirects(count:last:)``.
        var lastRedirect = ""
        /// Scripts to load on a node before their commands go out again.
        var scriptLoads: [(endpoint: RedisEndpoint, script: RedisScript)] = []

        mutating func problem(_ error: RedisError, failover isFailover: Bool) {
            lastProblem = error
            backOff = true
            if isFailover { failover = true }
        }
    }

    private static let asking = RedisCommand("ASKING")

    /// Runs commands in rounds until each has its final reply: every node's share of a round written at once,
    /// then read back; redirected commands form the next round.
    /// - Parameter repliesRead: called with the replies once every command has its final one, before the replies
    ///   of the `WAIT`s are read (not at all when the run fails first).
    func execute(
        _ commands: [RedisCommand], waitingFor wait: (replicas: Int, milliseconds: Int)?,
        repliesRead: (([RedisValue]) -> Void)? = nil
    ) throws(RedisError) -> Outcome {
        let count = commands.count
        var replies = [RedisValue?](repeating: nil, count: count)
        var repliedBy = [RedisEndpoint?](repeating: nil, count: count)
        var askTargets = [RedisEndpoint?](repeating: nil, count: count)
        // A keyless command keeps the master it was first sent to, so that a `NOSCRIPT` is answered where it arose.
        var keylessTargets = [RedisEndpoint?](repeating: nil, count: count)
        var redirects = [UInt8](repeating: 0, count: count)
        var scriptLoads = [UInt8](repeating: 0, count: count)
        var pending = Array(0..<count)
        var replicas = Int.max
        var waitsAnswered = true
        let waitCommand = wait.map { RedisCommand("WAIT", $0.replicas, $0.milliseconds) }
        let timeout = configuration.commandTimeout
        let deadline = monotonicSeconds() + configuration.retryTimeout.seconds
        var pause = 0.01

        while !pending.isEmpty {
            let topology = try currentTopology()
            var round = Round()
            var retry: [Int] = []
            var batches: [Batch] = []
            var masters: [Int]?

            // Which node gets which command.
            for index in pending {
                let endpoint: RedisEndpoint
                let pool: NodePool
                let asking = askTargets[index] != nil
                if let target = askTargets[index] {
                    endpoint = target
                    pool = topology.pool(for: target) ?? self.pool(for: target)
                } else if let slot = commands[index].slot {
                    guard let owner = topology.owner(ofSlot: slot) else {
                        retry.append(index)
                        round.problem(.clusterDown(nil, message: "no master serves slot \(slot)"), failover: true)
                        continue
                    }
                    endpoint = owner.node.endpoint
                    pool = owner.pool
                } else if let kept = keylessTargets[index], let keptPool = topology.pool(for: kept) {
                    endpoint = kept
                    pool = keptPool
                } else {
                    if masters == nil { masters = topology.masterIndexes }
                    let choices = masters ?? []
                    let turn = (keylessTurn.add(1, ordering: .relaxed).newValue & Int.max) % max(1, choices.count)
                    let chosen = choices.isEmpty ? 0 : choices[turn]
                    endpoint = topology.nodes[chosen].endpoint
                    pool = topology.pools[chosen]
                    keylessTargets[index] = endpoint
                }
                if let at = batches.firstIndex(where: { $0.endpoint == endpoint }) {
                    batches[at].items.append((index, asking))
                } else {
                    batches.append(Batch(endpoint: endpoint, pool: pool, items: [(index, asking)]))
                }
            }
            // Connections in endpoint order: two runs that need the same nodes never wait on each other in a cycle.
            batches.sort { $0.endpoint < $1.endpoint }
            for at in batches.indices where round.fatal == nil {
                do {
                    batches[at].connection = try batches[at].pool.acquire(configuration: configuration)
                } catch {
                    if case .unreachable = error, topology.isCluster {
                        // Nothing was sent: the commands go again once the layout says who serves them now.
                        retry.append(contentsOf: batches[at].items.map(\.index))
                        round.problem(error, failover: true)
                    } else {
                        round.fatal = error
                    }
                }
            }

            // Every node's commands out before any reply is read.
            if round.fatal == nil {
                for at in batches.indices {
                    guard let connection = batches[at].connection else { continue }
                    batches[at].written = true
                    do {
                        for item in batches[at].items {
                            if item.asking { try connection.append(RedisClusterClient.asking) }
                            try connection.append(commands[item.index])
                        }
                        if let waitCommand { try connection.append(waitCommand) }
                        try connection.flush(timeout: timeout)
                    } catch {
                        batches[at].writeError = error
                    }
                }
            }

            // The replies, node by node, in the order written.
            for at in batches.indices where batches[at].written {
                guard let connection = batches[at].connection else { continue }
                let endpoint = batches[at].endpoint
                let items = batches[at].items
                var position = 0
                do throws(RedisError) {
                    if let writeError = batches[at].writeError { throw writeError }
                    while position < items.count {
                        let index = items[position].index
                        if items[position].asking { _ = try connection.readReply(timeout: timeout) }
                        let reply = try connection.readReply(timeout: timeout)
                        position += 1
                        guard case .error(let message) = reply else {
                            replies[index] = reply
                            repliedBy[index] = endpoint
                            continue
                        }
                        let code = RedisError.code(of: message)
                        let redirection =
                            code == "MOVED" || code == "ASK"
                            ? RedisClusterClient.redirection(message, from: endpoint) : nil
                        switch code {
                        case "MOVED" where redirection != nil:
                            redirects[index] &+= 1
                            askTargets[index] = nil
                            if let redirection { noteMoved(slot: redirection.slot, to: redirection.endpoint) }
                            round.moved = true
                            round.lastRedirect = message
                            retry.append(index)
                        case "ASK" where redirection != nil:
                            redirects[index] &+= 1
                            askTargets[index] = redirection?.endpoint
                            round.lastRedirect = message
                            retry.append(index)
                        case "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN":
                            askTargets[index] = nil
                            retry.append(index)
                            round.problem(RedisError.reply(message, from: endpoint), failover: false)
                        case "READONLY":
                            // The node is a replica now: its master failed over (or it was demoted).
                            askTargets[index] = nil
                            retry.append(index)
                            round.problem(.server(endpoint, message: message), failover: true)
                        case "NOSCRIPT" where commands[index].script != nil && scriptLoads[index] < 2:
                            scriptLoads[index] += 1
                            if let script = commands[index].script,
                                !round.scriptLoads.contains(where: { $0.endpoint == endpoint && $0.script == script })
                            {
                                round.scriptLoads.append((endpoint, script))
                            }
                            retry.append(index)
                        default:
                            replies[index] = reply
                            repliedBy[index] = endpoint
                        }
                    }
                    batches[at].repliesRead = true
                } catch {
                    // The commands from `position` on have no reply: written, so they may have run.
                    let unknown = items[position...].map(\.index)
                    if case .timeout = error {
                        round.fatal = round.fatal ?? error
                    } else if unknown.allSatisfy({ commands[$0].isIdempotent }) {
                        retry.append(contentsOf: unknown)
                        if waitCommand != nil {
                            // The writes answered before the break are on a master that may be gone.
                            replicas = 0
                            waitsAnswered = false
                        }
                        round.problem(error, failover: true)
                    } else {
                        round.fatal = round.fatal ?? RedisClusterClient.mayHaveRun(error, endpoint)
                    }
                }
            }
            if retry.isEmpty && round.fatal == nil, let repliesRead {
                // Every command has its final reply: the caller may go on while the replicas catch up.
                repliesRead(replies.map { $0 ?? .null })
            }
            // Each connection's `WAIT`, once every node's commands answered.
            for at in batches.indices where batches[at].repliesRead && waitCommand != nil {
                guard let connection = batches[at].connection else { continue }
                do throws(RedisError) {
                    let acknowledged = try connection.readReply(timeout: timeout)
                    if let count = acknowledged.integer {
                        replicas = min(replicas, Int(count))
                    } else {
                        // An error in its place: the master stopped waiting (`UNBLOCKED` when it turned replica).
                        replicas = 0
                        waitsAnswered = false
                    }
                } catch {
                    if case .timeout = error {
                        round.fatal = round.fatal ?? error
                    } else {
                        replicas = 0
                        waitsAnswered = false
                        round.problem(error, failover: true)
                    }
                }
            }
            for batch in batches {
                if let connection = batch.connection { batch.pool.release(connection) }
            }
            if let fatal = round.fatal { throw fatal }

            for load in round.scriptLoads {
                do {
                    try loadScript(load.script, on: load.endpoint)
                } catch {
                    switch error {
                    case .unreachable, .connectionLost: round.problem(error, failover: true)
                    default: throw error
                    }
                }
            }
            pending = retry.sorted()
            guard !pending.isEmpty else { break }
            if let worst = pending.map({ redirects[$0] }).max(), Int(worst) > configuration.maxRedirects {
                // While a reshard finishes a slot's move, its two nodes may send a command back and forth until
                // both know the new owner: past `maxRedirects`, wait, read the layout again and retry until the
                // retry time runs out, rather than fail at once (an import beside a reshard meets this about once in four).
                let tooMany = RedisError.tooManyRedirects(count: Int(worst), last: round.lastRedirect)
                guard monotonicSeconds() < deadline else { throw tooMany }
                round.problem(tooMany, failover: true)
            }
            if round.failover {
                _ = try? refresh(minimumInterval: 0.02, waitForOthers: false)
            } else if round.moved {
                _ = try? refresh(minimumInterval: 0.1, waitForOthers: false)
            }
            if round.backOff {
                // The last try comes at the deadline, not one pause before it.
                let now = monotonicSeconds()
                if now >= deadline {
                    throw round.lastProblem ?? .clusterDown(nil, message: "the cluster did not serve the command")
                }
                sleep(seconds: min(pause, deadline - now))
                pause = min(pause * 2, 0.25)
            }
        }

        var final: [RedisValue] = []
        final.reserveCapacity(count)
        for reply in replies { final.append(reply ?? .null) }
        return Outcome(
            replies: final, repliedBy: repliedBy, replicas: wait == nil || replicas == Int.max ? 0 : replicas,
            waitsAnswered: waitsAnswered)
    }

    /// The slot and node of a `MOVED` or `ASK` reply (`MOVED 3999 127.0.0.1:6381`). An empty host (a node with an
    /// unknown endpoint) means the host of the node that replied.
    static func redirection(_ message: String, from endpoint: RedisEndpoint) -> (slot: Int, endpoint: RedisEndpoint)? {
        let parts = message.split(separator: " ")
        guard parts.count >= 3, let slot = Int(parts[1]), (0..<RedisHashSlot.count).contains(slot),
            let colon = parts[2].lastIndex(of: ":"), let port = Int(parts[2][parts[2].index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        var host = parts[2][..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return (slot, RedisEndpoint(host: host.isEmpty ? endpoint.host : String(host), port: port))
    }

    /// The error for a command that was written and got no reply.
    private static func mayHaveRun(_ error: RedisError, _ endpoint: RedisEndpoint) -> RedisError {
        switch error {
        case .connectionLost(let at, let reason, _): .connectionLost(at, reason: reason, mayHaveRun: true)
        case .protocolError: error
        default: .connectionLost(endpoint, reason: error.description, mayHaveRun: true)
        }
    }

    /// Loads `script` on one node (`SCRIPT LOAD`), after it answered `NOSCRIPT`.
    func loadScript(_ script: RedisScript, on endpoint: RedisEndpoint) throws(RedisError) {
        let reply = try send(RedisCommand("SCRIPT", "LOAD", script.source), to: endpoint)
        guard reply.string == script.sha1 else {
            throw .protocolError(endpoint, reason: "SCRIPT LOAD replied \(reply) where \(script.sha1) was expected")
        }
    }
}
