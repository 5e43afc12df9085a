extension RedisClusterClient {
    /// Asks the cluster for its layout now (`CLUSTER SLOTS`), from the known masters, then the seeds, then the
    /// replicas, whichever answers first; nodes that failed lately are asked last.
    /// - Throws: ``RedisError/unreachable(_:reason:)`` when no node answers,
    ///   ``RedisError/authenticationFailed(_:reason:)``,
    ///   or ``RedisError/notACluster(_:reason:)`` when a standalone server is not acceptable.
    public func refreshTopology() throws(RedisError) {
        _ = try refresh(minimumInterval: 0, waitForOthers: true)
    }

    /// Whether the client has learned the cluster's layout at least once. Until it has, no node it was given
    /// answered, and one that cannot be reached is not a failover under way (nothing says it was ever up): a
    /// mistyped port need not be asked again for the retry timeout.
    public var hasLearnedLayout: Bool { state.withLock { $0.topology != nil } }

    /// The nodes as the client knows them: masters (with their slots) first, then replicas. Asks the cluster
    /// first if the client has not yet.
    /// - Throws: as ``refreshTopology()``, when the layout is not known yet.
    public func nodes() throws(RedisError) -> [RedisNode] {
        try currentTopology().nodes
    }

    /// The master the client sends `slot`'s commands to; `nil` when no node serves the slot.
    /// - Parameter slot: a slot in `0..<16384`.
    /// - Throws: as ``refreshTopology()``, when the layout is not known yet.
    public func master(forSlot slot: Int) throws(RedisError) -> RedisNode? {
        try currentTopology().owner(ofSlot: slot & (RedisHashSlot.count - 1))?.node
    }

    /// Whether the server is a cluster (`false`: one standalone server, served as owning every slot).
    /// - Throws: as ``refreshTopology()``, when the layout is not known yet.
    public func isCluster() throws(RedisError) -> Bool {
        try currentTopology().isCluster
    }

    /// The layout, asked for first when there is none yet.
    func currentTopology() throws(RedisError) -> Topology {
        if let topology = state.withLock({ $0.topology }) { return topology }
        return try refresh(minimumInterval: 0, waitForOthers: true)
    }

    /// The pool for `endpoint`, made on first use.
    func pool(for endpoint: RedisEndpoint) -> NodePool {
        let limit = configuration.connectionsPerNode
        return state.withLock { $0.pool(for: endpoint, limit: limit) }
    }

    /// Asks for the layout unless another thread is asking already or the last answer is younger than
    /// `minimumInterval` seconds; either way returns the layout to use.
    /// - Parameters:
    ///   - minimumInterval: how old the layout must be to be asked again (a burst of `MOVED` asks once).
    ///   - waitForOthers: ask even when another thread is asking (when the caller has no layout to go on with).
    @discardableResult
    func refresh(minimumInterval: Double, waitForOthers: Bool) throws(RedisError) -> Topology {
        let now = monotonicSeconds()
        let claim: (skip: Topology?, candidates: [RedisEndpoint]) = state.withLock { state in
            if let topology = state.topology {
                if state.refreshing && !waitForOthers { return (topology, []) }
                if now - state.refreshedAt < minimumInterval { return (topology, []) }
            }
            state.refreshing = true
            return (nil, candidates(state))
        }
        if let skip = claim.skip { return skip }
        defer { state.withLock { $0.refreshing = false } }
        let topology = try discover(from: claim.candidates)
        let seeds = configuration.seeds
        state.withLock { state in
            state.topology = topology
            state.refreshedAt = monotonicSeconds()
            let kept = Set(topology.nodes.map(\.endpoint)).union(seeds)
            state.pools = state.pools.filter { kept.contains($0.key) }
        }
        return topology
    }

    /// Whom to ask for the layout, in order: masters, seeds, replicas; those that failed lately at the end.
    private func candidates(_ state: ClientState) -> [RedisEndpoint] {
        var healthy: [RedisEndpoint] = []
        var failing: [RedisEndpoint] = []
        func consider(_ endpoint: RedisEndpoint) {
            guard !healthy.contains(endpoint), !failing.contains(endpoint) else { return }
            if state.pools[endpoint]?.failedRecently(within: 1) == true {
                failing.append(endpoint)
            } else {
                healthy.append(endpoint)
            }
        }
        let nodes = state.topology?.nodes ?? []
        let masters = nodes.filter { $0.role == .master }
        // Start at a different master each time, so that refreshes spread over the cluster.
        let turn = masters.isEmpty ? 0 : (keylessTurn.add(1, ordering: .relaxed).newValue & Int.max) % masters.count
        for node in masters[turn...] + masters[..<turn] { consider(node.endpoint) }
        for seed in configuration.seeds { consider(seed) }
        for node in nodes where node.role == .replica { consider(node.endpoint) }
        return healthy + failing
    }

    /// Asks each candidate for `CLUSTER SLOTS` until one answers.
    private func discover(from candidates: [RedisEndpoint]) throws(RedisError) -> Topology {
        var failed: [RedisEndpoint] = []
        var reasons: [String] = []
        // The answers that were not the Redis protocol: when every node asked gave one, nothing there is Redis, and
        // asking again for the retry timeout (10 s, as for a node that is down) cannot help.
        var foreign: [RedisError] = []
        var unassigned: RedisEndpoint?
        for endpoint in candidates {
            let pool = pool(for: endpoint)
            let reply: RedisValue
            do {
                let connection = try pool.acquire(configuration: configuration)
                defer { pool.release(connection) }
                reply = try connection.roundTrip(
                    RedisCommand("CLUSTER", "SLOTS"), timeout: configuration.commandTimeout)
            } catch {
                switch error {
                case .authenticationFailed, .invalidConfiguration: throw error
                case .protocolError(_, let reason):
                    failed.append(endpoint)
                    reasons.append(reason)
                    foreign.append(error)
                    continue
                case .unreachable(_, let reason), .connectionLost(_, let reason, _):
                    failed.append(endpoint)
                    reasons.append(reason)
                    continue
                default:
                    failed.append(endpoint)
                    reasons.append(error.description)
                    continue
                }
            }
            if case .error(let message) = reply {
                if message.contains("cluster support disabled") {
                    return try standalone(endpoint)
                }
                let code = RedisError.code(of: message)
                if code == "NOAUTH" || code == "WRONGPASS" {
                    throw .authenticationFailed(endpoint, reason: RedisError.loginRefusal(message))
                }
                failed.append(endpoint)
                reasons.append(message)
                continue
            }
            let nodes = try Topology.nodes(fromSlots: reply, queried: endpoint)
            guard nodes.isEmpty else { return Topology(nodes: nodes, isCluster: true, pool: pool(for:)) }
            // A node that serves no slot: a cluster with none assigned yet, or a node not joined to the cluster (a
            // fresh or replaced one listed first) that would hide the others' layout. The next ones are asked;
            // when none knows more, the node asked is all there is to send keyless commands to.
            if unassigned == nil { unassigned = endpoint }
        }
        if let unassigned {
            return Topology(nodes: [RedisNode(endpoint: unassigned, id: "", role: .master)], isCluster: true, pool: pool(for:))
        }
        if let first = foreign.first, foreign.count == failed.count { throw first }
        let reason = reasons.last ?? "no node to ask"
        throw .unreachable(failed.isEmpty ? configuration.seeds : failed, reason: reason)
    }

    /// The layout for a standalone server: one master that owns every slot.
    private func standalone(_ endpoint: RedisEndpoint) throws(RedisError) -> Topology {
        if configuration.requiresCluster {
            throw .notACluster(endpoint, reason: "it has cluster support disabled, and this client requires a cluster")
        }
        if configuration.seeds.count > 1 {
            throw .notACluster(
                endpoint, reason: "it has cluster support disabled, but \(configuration.seeds.count) seeds were given")
        }
        let node = RedisNode(endpoint: endpoint, id: "", role: .master, slots: [0...(RedisHashSlot.count - 1)])
        return Topology(nodes: [node], isCluster: false, pool: pool(for:))
    }

    /// Records a `MOVED`: `slot` is served by `endpoint` from now on.
    func noteMoved(slot: Int, to endpoint: RedisEndpoint) {
        let limit = configuration.connectionsPerNode
        state.withLock { state in
            let pool = state.pool(for: endpoint, limit: limit)
            state.topology?.assign(slot: slot, to: endpoint, pool: { _ in pool })
        }
    }
}
