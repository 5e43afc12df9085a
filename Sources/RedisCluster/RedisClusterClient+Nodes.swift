/// One node's reply to a command sent to several nodes.
public struct RedisNodeReply: Sendable {
    /// The node.
    public var node: RedisNode
    /// Its reply, or why there is none; an error reply is a failure (``RedisError/server(_:message:)``, ...).
    public var result: Result<RedisValue, RedisError>
}

/// One node's replies to a pipeline sent to several nodes.
public struct RedisNodeReplies: Sendable {
    /// The node.
    public var node: RedisNode
    /// One result per command, in order: its reply, or why there is none.
    public var results: [Result<RedisValue, RedisError>]
}

extension RedisClusterClient {
    /// Sends a command to one node, whatever it serves, and follows no redirection: for commands about the node
    /// itself (`CONFIG GET`, `INFO persistence`, `BGREWRITEAOF`, `CLUSTER NODES`).
    ///
    /// A read (``RedisCommand/isIdempotent``) whose connection broke is sent once more on a new connection.
    /// - Parameters:
    ///   - command: the command.
    ///   - endpoint: the node.
    /// - Returns: the reply; never ``RedisValue/error(_:)``.
    /// - Throws: the reply's error as ``RedisError``, or what kept the command from a reply.
    public func send(_ command: RedisCommand, to endpoint: RedisEndpoint) throws(RedisError) -> RedisValue {
        let pool = pool(for: endpoint)
        var attempt = 0
        while true {
            attempt += 1
            let connection = try pool.acquire(configuration: configuration)
            let outcome: Result<RedisValue, RedisError>
            do {
                outcome = .success(try connection.roundTrip(command, timeout: configuration.commandTimeout))
            } catch {
                outcome = .failure(error)
            }
            pool.release(connection)
            switch outcome {
            case .success(let reply):
                return try reply.checked(from: endpoint)
            case .failure(.connectionLost(_, _, _)) where command.isIdempotent && attempt == 1:
                continue
            case .failure(let error):
                throw error
            }
        }
    }

    /// Sends a command to every master at once (each gets it on one of its connections) and collects the replies.
    ///
    /// Uses the layout the client has; call ``refreshTopology()`` first for the newest.
    /// - Parameter command: the command, such as `BGREWRITEAOF` or `INFO persistence`.
    /// - Returns: one reply per master, in the order of ``nodes()``.
    /// - Throws: only when the layout cannot be had; a node's own failure is in its reply.
    public func sendToEveryMaster(_ command: RedisCommand) throws(RedisError) -> [RedisNodeReply] {
        let masters = try currentTopology().nodes.filter { $0.role == .master }
        return single(broadcast(masters.map { _ in [command] }, to: masters))
    }

    /// Sends the same commands to every master as one pipeline each, all masters at once: one round trip for
    /// questions about every master (`CONFIG GET`, `INFO`), however many.
    ///
    /// Uses the layout the client has; call ``refreshTopology()`` first for the newest.
    /// - Parameter commands: the commands, in the order each master runs them.
    /// - Returns: one entry per master, in the order of ``nodes()``, with one result per command.
    /// - Throws: only when the layout cannot be had; a node's own failure is in its results.
    public func pipelineToEveryMaster(_ commands: [RedisCommand]) throws(RedisError) -> [RedisNodeReplies] {
        let masters = try currentTopology().nodes.filter { $0.role == .master }
        return broadcast(masters.map { _ in commands }, to: masters)
    }

    /// ``pipelineToEveryMaster(_:)`` and ``pipeline(_:)`` of reads in one round trip: each of `reads` is written,
    /// after the commands for every master, to the master that serves its key's slot, so that a process that must
    /// ask every master something and read a few keys waits once.
    ///
    /// A read that does not get its reply there (the slot moved or is moving, the node failed) is sent again with
    /// ``pipeline(_:)``, which follows redirections; reads run twice harmlessly.
    /// - Parameters:
    ///   - commands: the commands for every master, in the order each runs them.
    ///   - reads: keyed reads (``RedisCommand/isIdempotent``).
    /// - Returns: the masters' replies as ``pipelineToEveryMaster(_:)`` returns them, and one reply per read as
    ///   ``pipeline(_:)`` returns them.
    /// - Throws: when the layout cannot be had, or as ``pipeline(_:)`` for the reads sent again.
    public func pipelineToEveryMaster(_ commands: [RedisCommand], with reads: [RedisCommand]) throws(RedisError)
        -> (masters: [RedisNodeReplies], reads: [RedisValue])
    {
        precondition(reads.allSatisfy { $0.isIdempotent && $0.slot != nil }, "only keyed reads ride along")
        let topology = try currentTopology()
        let masters = topology.nodes.filter { $0.role == .master }
        var perMaster = [[RedisCommand]](repeating: commands, count: masters.count)
        // Where each read went: its master's index (-1 for none known) and its place in that master's pipeline.
        var master = [Int](repeating: -1, count: reads.count)
        var position = [Int](repeating: 0, count: reads.count)
        for index in reads.indices {
            guard let slot = reads[index].slot, let owner = topology.owner(ofSlot: slot)?.node.endpoint,
                let at = masters.firstIndex(where: { $0.endpoint == owner })
            else { continue }
            master[index] = at
            position[index] = perMaster[at].count
            perMaster[at].append(reads[index])
        }
        let replies = broadcast(perMaster, to: masters)
        var readReplies = [RedisValue](repeating: .null, count: reads.count)
        var unanswered: [Int] = []
        for index in reads.indices {
            if master[index] >= 0, case .success(let reply) = replies[master[index]].results[position[index]] {
                readReplies[index] = reply
            } else {
                unanswered.append(index)
            }
        }
        if !unanswered.isEmpty {
            // Their master failed (it answered nothing in time, or went), or no master was known for their slot:
            // the layout is read again first, since a failover may have moved the slot meanwhile (sent to the
            // same paused master, the reads waited out a second timeout, after its replica had taken over).
            _ = try? refresh(minimumInterval: 0, waitForOthers: true)
            let again = try pipeline(unanswered.map { reads[$0] })
            for offset in unanswered.indices { readReplies[unanswered[offset]] = again[offset] }
        }
        let own = replies.map { RedisNodeReplies(node: $0.node, results: Array($0.results[..<commands.count])) }
        return (own, readReplies)
    }

    /// Sends a command to every node, replicas included, at once: for settings that each node has on its own
    /// (`CONFIG GET appendonly`, `INFO persistence`).
    /// - Parameter command: the command.
    /// - Returns: one reply per node, masters first, in the order of ``nodes()``.
    /// - Throws: only when the layout cannot be had; a node's own failure is in its reply.
    public func sendToEveryNode(_ command: RedisCommand) throws(RedisError) -> [RedisNodeReply] {
        let nodes = try currentTopology().nodes
        return single(broadcast(nodes.map { _ in [command] }, to: nodes))
    }

    private func single(_ replies: [RedisNodeReplies]) -> [RedisNodeReply] {
        replies.map { RedisNodeReply(node: $0.node, result: $0.results[0]) }
    }

    /// Writes each node's commands (`perNode[i]` for `nodes[i]`) to every node before reading any reply.
    private func broadcast(_ perNode: [[RedisCommand]], to nodes: [RedisNode]) -> [RedisNodeReplies] {
        var results = [[Result<RedisValue, RedisError>]?](repeating: nil, count: nodes.count)
        var connections: [(index: Int, pool: NodePool, connection: RedisConnection)] = []
        // In endpoint order, as pipelines take them.
        for index in nodes.indices.sorted(by: { nodes[$0].endpoint < nodes[$1].endpoint }) {
            let commands = perNode[index]
            let pool = pool(for: nodes[index].endpoint)
            let connection: RedisConnection
            do {
                connection = try pool.acquire(configuration: configuration)
            } catch {
                results[index] = commands.map { _ in .failure(error) }
                continue
            }
            do {
                for command in commands { try connection.append(command) }
                try connection.flush(timeout: configuration.commandTimeout)
                connections.append((index, pool, connection))
            } catch {
                results[index] = commands.map { _ in .failure(error) }
                pool.release(connection)
            }
        }
        for entry in connections {
            let commands = perNode[entry.index]
            var replies: [Result<RedisValue, RedisError>] = []
            for _ in commands {
                do {
                    let reply = try entry.connection.readReply(timeout: configuration.commandTimeout)
                    replies.append(
                        Result { () throws(RedisError) in try reply.checked(from: nodes[entry.index].endpoint) })
                } catch {
                    // The connection is broken: the replies after this one are lost with it.
                    while replies.count < commands.count { replies.append(.failure(error)) }
                    break
                }
            }
            results[entry.index] = replies
            entry.pool.release(entry.connection)
        }
        return nodes.indices.map { index in
            RedisNodeReplies(
                node: nodes[index],
                results: results[index]
                    ?? perNode[index].map { _ in .failure(.unreachable([nodes[index].endpoint], reason: "not asked")) })
        }
    }
}
