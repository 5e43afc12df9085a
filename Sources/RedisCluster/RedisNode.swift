/// One node of the cluster as the client last saw it in `CLUSTER SLOTS`.
///
/// Redis 7.0 leaves out of `CLUSTER SLOTS` a replica that is marked failed or has not yet received anything from
/// its master (replication offset 0, as on a new, empty cluster): such a replica is not among the client's nodes
/// until its master has written something.
public struct RedisNode: Sendable, Hashable, CustomStringConvertible {
    /// Whether a node serves its slots or copies a master.
    public enum Role: String, Sendable, Hashable {
        /// Serves reads and writes for its slots.
        case master
        /// Copies a master and takes over when the master fails.
        case replica
    }

    /// Where the node listens.
    public var endpoint: RedisEndpoint
    /// The node's cluster ID (40 hex digits); empty for a standalone server or a node known only from a redirect.
    public var id: String
    /// Master or replica.
    public var role: Role
    /// For a replica, the ID of its master; `nil` for a master.
    public var masterID: String?
    /// For a master, the slot ranges it serves, in order; empty for a replica.
    public var slots: [ClosedRange<Int>]

    /// A node as the topology describes it.
    /// - Parameters:
    ///   - endpoint: where the node listens.
    ///   - id: the cluster ID, or empty when unknown.
    ///   - role: master or replica.
    ///   - masterID: a replica's master.
    ///   - slots: a master's slot ranges.
    public init(
        endpoint: RedisEndpoint, id: String, role: Role, masterID: String? = nil, slots: [ClosedRange<Int>] = []
    ) {
        self.endpoint = endpoint
        self.id = id
        self.role = role
        self.masterID = masterID
        self.slots = slots
    }

    /// `host:port (master)`, with the ID's first digits.
    public var description: String {
        "\(endpoint) (\(role.rawValue)\(id.isEmpty ? "" : " " + String(id.prefix(8))))"
    }
}
