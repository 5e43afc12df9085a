/// Which node serves which slot, and a connection pool for each node: what a command is routed by.
///
/// A value: the client keeps the current one under its lock and hands copies to callers (the slot table is shared
/// until a `MOVED` patches it).
struct Topology: Sendable {
    /// Every node known: masters first, then replicas.
    private(set) var nodes: [RedisNode]
    /// The pool of each node, at the same index.
    private(set) var pools: [NodePool]
    /// For each slot, the index of its master in `nodes`, or `Topology.unowned`.
    private(set) var owners: [UInt16]
    /// Whether the server is a cluster (`false`: one standalone server owns every slot).
    let isCluster: Bool

    static let unowned = UInt16.max

    /// A topology from `CLUSTER SLOTS`' nodes.
    /// - Parameters:
    ///   - nodes: the masters with their slot ranges and the replicas.
    ///   - isCluster: whether these came from a cluster.
    ///   - pool: the pool for an endpoint (kept from the previous topology when the node was already known).
    init(nodes: [RedisNode], isCluster: Bool, pool: (RedisEndpoint) -> NodePool) {
        let ordered = nodes.filter { $0.role == .master } + nodes.filter { $0.role == .replica }
        self.nodes = ordered
        pools = ordered.map { pool($0.endpoint) }
        self.isCluster = isCluster
        var owners = [UInt16](repeating: Topology.unowned, count: RedisHashSlot.count)
        for (index, node) in ordered.enumerated() where node.role == .master {
            for range in node.slots {
                for slot in range.clamped(to: 0...(RedisHashSlot.count - 1)) { owners[slot] = UInt16(index) }
            }
        }
        self.owners = owners
    }

    /// The master that serves `slot`, with its pool; `nil` when no node does.
    func owner(ofSlot slot: Int) -> (node: RedisNode, pool: NodePool)? {
        let index = owners[slot]
        guard index != Topology.unowned else { return nil }
        return (nodes[Int(index)], pools[Int(index)])
    }

    /// The indexes of the masters in `nodes`.
    var masterIndexes: [Int] { nodes.indices.filter { nodes[$0].role == .master } }

    /// The pool of a known endpoint.
    func pool(for endpoint: RedisEndpoint) -> NodePool? {
        nodes.firstIndex(where: { $0.endpoint == endpoint }).map { pools[$0] }
    }

    /// Records what a `MOVED` said: `slot` is now served by `endpoint`. A node not yet known is added as a master
    /// with an unknown ID until the next refresh describes it.
    mutating func assign(slot: Int, to endpoint: RedisEndpoint, pool: (RedisEndpoint) -> NodePool) {
        var index = nodes.firstIndex(where: { $0.endpoint == endpoint })
        if let known = index, nodes[known].role == .replica {
            // A replica that a failover promoted: it is a master from now on.
            nodes[known].role = .master
            nodes[known].masterID = nil
        }
        if index == nil {
            nodes.append(RedisNode(endpoint: endpoint, id: "", role: .master))
            pools.append(pool(endpoint))
            index = nodes.count - 1
        }
        guard let index, index < Int(Topology.unowned) else { return }
        let previous = owners[slot]
        owners[slot] = UInt16(index)
        if previous != Topology.unowned && Int(previous) != index {
            nodes[Int(previous)].slots = Topology.removing(slot, from: nodes[Int(previous)].slots)
        }
        nodes[index].slots = Topology.adding(slot, to: nodes[index].slots)
    }

    private static func removing(_ slot: Int, from ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        ranges.flatMap { range -> [ClosedRange<Int>] in
            guard range.contains(slot) else { return [range] }
            var parts: [ClosedRange<Int>] = []
            if range.lowerBound < slot { parts.append(range.lowerBound...(slot - 1)) }
            if slot < range.upperBound { parts.append((slot + 1)...range.upperBound) }
            return parts
        }
    }

    private static func adding(_ slot: Int, to ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        ranges.contains(where: { $0.contains(slot) }) ? ranges : merged(ranges + [slot...slot])
    }

    /// The nodes described by a `CLUSTER SLOTS` reply.
    ///
    /// Each entry is `[start, end, master, replica...]`, each node `[host, port, id, metadata]`. A null or empty
    /// host means "the address you asked": `queried`'s host is used.
    /// - Throws: ``RedisError/protocolError(_:reason:)`` when the reply does not have that shape.
    static func nodes(fromSlots reply: RedisValue, queried: RedisEndpoint) throws(RedisError) -> [RedisNode] {
        guard let entries = reply.array else {
            throw .protocolError(queried, reason: "CLUSTER SLOTS did not reply with an array: \(reply)")
        }
        var nodes: [RedisNode] = []
        func index(of endpoint: RedisEndpoint, id: String, role: RedisNode.Role, masterID: String?) -> Int {
            if let found = nodes.firstIndex(where: { $0.endpoint == endpoint }) { return found }
            nodes.append(RedisNode(endpoint: endpoint, id: id, role: role, masterID: masterID))
            return nodes.count - 1
        }
        for entry in entries {
            guard let fields = entry.array, fields.count >= 3, let start = fields[0].integer,
                let end = fields[1].integer, start >= 0, start <= end, end < Int64(RedisHashSlot.count),
                let master = try endpoint(of: fields[2], queried: queried)
            else { throw .protocolError(queried, reason: "CLUSTER SLOTS has an entry of an unknown shape: \(entry)") }
            let masterIndex = index(of: master.endpoint, id: master.id, role: .master, masterID: nil)
            nodes[masterIndex].slots = merged(nodes[masterIndex].slots + [Int(start)...Int(end)])
            for replicaField in fields.dropFirst(3) {
                guard let replica = try endpoint(of: replicaField, queried: queried) else { continue }
                _ = index(of: replica.endpoint, id: replica.id, role: .replica, masterID: master.id)
            }
        }
        return nodes
    }

    private static func endpoint(of field: RedisValue, queried: RedisEndpoint) throws(RedisError) -> (
        endpoint: RedisEndpoint, id: String
    )? {
        guard let parts = field.array, parts.count >= 2, let port = parts[1].integer, (1...65535).contains(port)
        else { throw .protocolError(queried, reason: "CLUSTER SLOTS has a node of an unknown shape: \(field)") }
        var host = parts[0].string ?? ""
        if host.isEmpty || host == "?" { host = queried.host }
        let id = parts.count >= 3 ? parts[2].string ?? "" : ""
        return (RedisEndpoint(host: host, port: Int(port)), id)
    }

    private static func merged(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        var result: [ClosedRange<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, last.upperBound + 1 >= range.lowerBound {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }
}
