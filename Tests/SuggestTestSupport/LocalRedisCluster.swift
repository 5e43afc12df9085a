import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Real `redis-server` processes on loopback for tests: a Redis Cluster (masters and replicas, joined with
/// `redis-cli --cluster create`) or one standalone server, each node in its own directory under a fresh temporary
/// directory.
///
/// Every node runs under `setpriv --pdeathsig KILL`, started from one thread that lives as long as the test
/// process: when the process ends, however it ends, the kernel kills the nodes. (The death signal follows the thread
/// that started the child, not the process, so the nodes are never started from a test's own thread, which the
/// test runner may retire.) `stop()`, `deinit` and, for shared clusters, the process's exit stop the nodes and
/// remove the directory.
///
/// Needs `redis-server` and `redis-cli` (Debian: redis-server, redis-tools) and `setpriv` (util-linux).
public final class LocalRedisCluster: Sendable {
    /// One server process.
    public struct Node: Sendable, Hashable, CustomStringConvertible {
        /// The client port (the cluster bus is `port + 10000`).
        public let port: Int
        /// The `redis-server` process.
        public let pid: pid_t
        /// The node's directory: `redis.conf`, `redis.log`, `appendonlydir/`, `nodes.conf`.
        public let directory: String
        /// `127.0.0.1:PORT`.
        public var address: String { "127.0.0.1:\(port)" }
        /// `127.0.0.1:PORT`.
        public var description: String { address }
    }

    /// One line of `CLUSTER NODES`: a node as the cluster sees it.
    public struct ClusterNodeLine: Sendable, Hashable {
        /// The node's cluster ID.
        public var id: String
        /// Its client port.
        public var port: Int
        /// `myself`, `master`, `slave`, `fail?`, `fail`, ...
        public var flags: [String]
        /// The master's ID for a replica; `nil` for a master.
        public var masterID: String?
        /// The slots a master serves (migration markers left out).
        public var slots: [ClosedRange<Int>]
        /// Whether the node is a master.
        public var isMaster: Bool { flags.contains("master") }
        /// Whether the cluster has marked the node failed (`fail`, or `fail?` when only suspected).
        public var isFailing: Bool { flags.contains("fail") || flags.contains("fail?") }
    }

    /// Every node started, in port order of starting (for a cluster, `redis-cli --cluster create` makes the first
    /// `masters` of them masters).
    public let nodes: [Node]
    /// Whether the nodes form a cluster (`false`: one standalone server).
    public let isCluster: Bool
    /// The password every node requires (`requirepass`), if any.
    public let password: String?
    /// The temporary directory holding every node's directory.
    public let directory: String
    /// The nodes killed or stopped so far (by port).
    private let ended = Mutex<Set<Int>>([])
    /// Held across each `MIGRATE`: a node blocks while it migrates, so two migrations in opposite directions between
    /// the same two nodes (tests run in parallel) would each wait for the other until both time out.
    private let migrating = Mutex<Void>(())

    /// The seed list, `127.0.0.1:P1,127.0.0.1:P2,...`.
    public var seeds: String { nodes.map(\.address).joined(separator: ",") }
    /// `redis://[:PASSWORD@]SEEDS`.
    public var url: String { "redis://" + (password.map { ":\($0)@" } ?? "") + seeds }

    /// Starts a cluster: `masters × (1 + replicasPerMaster)` nodes with `cluster-enabled yes`, `appendonly yes`,
    /// `appendfsync always`, `cluster-node-timeout 2000`, joined into one cluster; returns once every node reports
    /// `cluster_state:ok`, knows every replica, and every replica's link to its master is up.
    /// - Parameters:
    ///   - masters: at least 3.
    ///   - replicasPerMaster: replicas of each master.
    ///   - password: sets `requirepass` and `masterauth` on every node.
    ///   - settings: more `redis.conf` lines (`maxmemory 1mb`).
    /// - Throws: `HarnessError` when a tool is missing or a node does not come up (with its log's end).
    public init(
        masters: Int = 3, replicasPerMaster: Int = 1, password: String? = nil, settings: [String] = []
    ) throws(HarnessError) {
        guard masters >= 3 else { throw HarnessError("a Redis Cluster needs at least 3 masters, not \(masters)") }
        let directory = try LocalRedisCluster.makeDirectory("redis-cluster")
        self.directory = directory
        self.password = password
        isCluster = true
        var started: [Node] = []
        do {
            for _ in 0..<(masters * (1 + replicasPerMaster)) {
                started.append(
                    try LocalRedisCluster.startNode(
                        in: directory, cluster: true, password: password, settings: settings))
            }
            nodes = started
            try create(masters: masters, replicasPerMaster: replicasPerMaster)
        } catch {
            LocalRedisCluster.end(started, directory: directory)
            throw error
        }
        LocalRedisCluster.register(self)
    }

    /// Starts one standalone server (`cluster-enabled no`, `appendonly yes`).
    /// - Parameters:
    ///   - password: sets `requirepass`.
    ///   - settings: more `redis.conf` lines.
    ///   - port: the port, from `reservePort()`, for a server that a client was told of before it started.
    public init(standaloneWithPassword password: String? = nil, settings: [String] = [], port: Int? = nil)
        throws(HarnessError)
    {
        let directory = try LocalRedisCluster.makeDirectory("redis-server")
        self.directory = directory
        self.password = password
        isCluster = false
        nodes = [
            try LocalRedisCluster.startNode(
                in: directory, cluster: false, password: password, settings: settings, port: port)
        ]
        LocalRedisCluster.register(self)
    }

    /// A cluster of the given shape shared by every test that asks for the same `name`: started on first use,
    /// stopped when the test process exits.
    public static func shared(
        _ name: String, masters: Int = 3, replicasPerMaster: Int = 1, password: String? = nil
    ) throws(HarnessError) -> LocalRedisCluster {
        let outcome: Result<LocalRedisCluster, HarnessError> = sharedClusters.withLock { clusters in
            if let cluster = clusters[name] { return .success(cluster) }
            do throws(HarnessError) {
                let cluster = try LocalRedisCluster(
                    masters: masters, replicasPerMaster: replicasPerMaster, password: password)
                clusters[name] = cluster
                return .success(cluster)
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    deinit { stop() }

    /// Kills every node still running (SIGKILL) and removes the directory.
    public func stop() {
        let running = ended.withLock { ended in
            defer { ended.formUnion(nodes.map(\.port)) }
            return nodes.filter { !ended.contains($0.port) }
        }
        LocalRedisCluster.unregister(self)
        LocalRedisCluster.end(running, directory: directory)
    }

    /// Kills one node with SIGKILL (no shutdown, no final fsync) and waits for it to be gone.
    public func kill(_ node: Node) {
        let first = ended.withLock { $0.insert(node.port).inserted }
        guard first else { return }
        LocalRedisCluster.end([node], directory: nil)
    }

    // MARK: - redis-cli

    /// Runs `redis-cli -p PORT ARGUMENTS` against a node (with the password, if any, through `REDISCLI_AUTH`).
    public func redisCLI(_ node: Node, _ arguments: [String], timeout: Double = 30) throws(HarnessError)
        -> ProcessOutcome
    {
        try LocalRedisCluster.redisCLI(
            port: node.port, password: password, arguments, scratch: node.directory, timeout: timeout)
    }

    /// Runs `redis-cli` against a node and returns its standard output without the final newline.
    /// - Throws: `HarnessError` when redis-cli fails or the reply is an error (`ERR ...`, `MOVED ...`).
    public func cli(_ node: Node, _ arguments: String...) throws(HarnessError) -> String {
        let outcome = try redisCLI(node, arguments)
        var output = outcome.output
        while output.hasSuffix("\n") { output.removeLast() }
        guard outcome.status == 0, !LocalRedisCluster.isErrorReply(output) else {
            throw HarnessError("redis-cli -p \(node.port) \(arguments.joined(separator: " ")): \(outcome)")
        }
        return output
    }

    // MARK: - The cluster's view

    /// `CLUSTER NODES` as a node sees it, parsed.
    public func clusterNodes(from node: Node) throws(HarnessError) -> [ClusterNodeLine] {
        let text = try cli(node, "CLUSTER", "NODES")
        var lines: [ClusterNodeLine] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, let colon = fields[1].lastIndex(of: ":") else { continue }
            let portText = fields[1][fields[1].index(after: colon)...].prefix(while: { $0 != "@" && $0 != "," })
            guard let port = Int(portText) else { continue }
            var slots: [ClosedRange<Int>] = []
            for field in fields.dropFirst(8) where !field.hasPrefix("[") {
                let bounds = field.split(separator: "-").compactMap { Int($0) }
                if bounds.count == 2 {
                    slots.append(bounds[0]...bounds[1])
                } else if bounds.count == 1 {
                    slots.append(bounds[0]...bounds[0])
                }
            }
            lines.append(
                ClusterNodeLine(
                    id: String(fields[0]), port: port, flags: fields[2].split(separator: ",").map(String.init),
                    masterID: fields[3] == "-" ? nil : String(fields[3]), slots: slots))
        }
        return lines
    }

    /// The nodes still running.
    public var liveNodes: [Node] {
        let gone = ended.withLock { $0 }
        return nodes.filter { !gone.contains($0.port) }
    }

    /// The node with this port.
    public func node(port: Int) throws(HarnessError) -> Node {
        guard let node = nodes.first(where: { $0.port == port }) else { throw HarnessError("no node on port \(port)") }
        return node
    }

    /// The masters as a live node sees them, with their IDs.
    public func masters() throws(HarnessError) -> [(node: Node, line: ClusterNodeLine)] {
        guard let witness = liveNodes.first else { throw HarnessError("no node is running") }
        var result: [(Node, ClusterNodeLine)] = []
        for line in try clusterNodes(from: witness) where line.isMaster && !line.isFailing && !line.slots.isEmpty {
            result.append((try node(port: line.port), line))
        }
        return result.sorted { $0.0.port < $1.0.port }
    }

    /// The master that serves `slot`, as a live node sees it.
    public func owner(ofSlot slot: Int) throws(HarnessError) -> (node: Node, line: ClusterNodeLine) {
        guard let owner = try masters().first(where: { $0.line.slots.contains(where: { $0.contains(slot) }) }) else {
            throw HarnessError("no master serves slot \(slot)")
        }
        return owner
    }

    /// A replica of `master`, as a live node sees it.
    public func replica(of master: Node) throws(HarnessError) -> Node {
        guard let witness = liveNodes.first(where: { $0 != master }) ?? liveNodes.first else {
            throw HarnessError("no node is running")
        }
        let lines = try clusterNodes(from: witness)
        guard let masterLine = lines.first(where: { $0.port == master.port }),
            let replicaLine = lines.first(where: { $0.masterID == masterLine.id && !$0.isFailing })
        else { throw HarnessError("\(master) has no replica") }
        return try node(port: replicaLine.port)
    }

    /// Waits until `replica` has taken over from its killed master: a master serving slots, the old master marked
    /// failed, and `cluster_state:ok` on every live node.
    /// - Returns: seconds waited.
    @discardableResult
    public func waitForPromotion(of replica: Node, timeout: Double = 30) throws(HarnessError) -> Double {
        let start = monotonicSeconds()
        while monotonicSeconds() - start < timeout {
            var promoted = true
            for witness in liveNodes {
                let lines = (try? clusterNodes(from: witness)) ?? []
                let info = (try? cli(witness, "CLUSTER", "INFO")) ?? ""
                guard let line = lines.first(where: { $0.port == replica.port }), line.isMaster, !line.slots.isEmpty,
                    info.contains("cluster_state:ok")
                else {
                    promoted = false
                    break
                }
            }
            if promoted { return monotonicSeconds() - start }
            sleepSeconds(0.05)
        }
        throw HarnessError("\(replica) was not promoted within \(timeout) s")
    }

    // MARK: - Moving slots

    /// Starts moving `slot` from `source` to `target`: `IMPORTING` on the target, `MIGRATING` on the source. Keys
    /// not yet moved stay on the source; the source answers `ASK` for the others.
    public func beginMigration(slot: Int, from source: Node, to target: Node) throws(HarnessError) {
        let sourceID = try cli(source, "CLUSTER", "MYID")
        let targetID = try cli(target, "CLUSTER", "MYID")
        _ = try cli(target, "CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID)
        _ = try cli(source, "CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID)
    }

    /// Moves some keys of a migrating slot from `source` to `target` (`MIGRATE ... KEYS`).
    public func migrate(keys: [String], from source: Node, to target: Node) throws(HarnessError) {
        guard !keys.isEmpty else { return }
        var arguments = ["MIGRATE", "127.0.0.1", String(target.port), "", "0", "5000"]
        if let password { arguments += ["AUTH", password] }
        arguments += ["KEYS"] + keys
        let outcome = try migrating.withLock { _ throws(HarnessError) in try redisCLI(source, arguments) }
        guard outcome.status == 0, outcome.output.hasPrefix("OK") || outcome.output.hasPrefix("NOKEY") else {
            throw HarnessError("MIGRATE from \(source) to \(target): \(outcome)")
        }
    }

    /// Ends a migration: moves the slot's remaining keys, then `SETSLOT slot NODE target` on the target, the source
    /// and every other master.
    public func finishMigration(slot: Int, from source: Node, to target: Node) throws(HarnessError) {
        while true {
            let keys = try cli(source, "CLUSTER", "GETKEYSINSLOT", String(slot), "100").split(separator: "\n").map(
                String.init)
            if keys.isEmpty { break }
            try migrate(keys: keys, from: source, to: target)
        }
        let targetID = try cli(target, "CLUSTER", "MYID")
        _ = try cli(target, "CLUSTER", "SETSLOT", String(slot), "NODE", targetID)
        _ = try cli(source, "CLUSTER", "SETSLOT", String(slot), "NODE", targetID)
        for (master, _) in try masters() where master != source && master != target {
            _ = try cli(master, "CLUSTER", "SETSLOT", String(slot), "NODE", targetID)
        }
    }

    /// Moves `slot` with all its keys from its master to `target`.
    public func moveSlot(_ slot: Int, to target: Node) throws(HarnessError) {
        let source = try owner(ofSlot: slot).node
        guard source != target else { return }
        try beginMigration(slot: slot, from: source, to: target)
        try finishMigration(slot: slot, from: source, to: target)
    }

    // MARK: - Starting

    private func create(masters: Int, replicasPerMaster: Int) throws(HarnessError) {
        let outcome = try LocalRedisCluster.redisCLI(
            port: nil, password: password,
            ["--cluster", "create"] + nodes.map(\.address) + [
                "--cluster-replicas", String(replicasPerMaster), "--cluster-yes",
            ],
            scratch: directory, timeout: 60)
        guard outcome.status == 0 else { throw HarnessError("redis-cli --cluster create failed: \(outcome)") }
        let replicas = masters * replicasPerMaster
        let start = monotonicSeconds()
        for node in nodes {
            while true {
                let info = (try? cli(node, "CLUSTER", "INFO")) ?? ""
                let lines = (try? clusterNodes(from: node)) ?? []
                let knownReplicas = lines.filter { $0.flags.contains("slave") }.count
                var linked = true
                if let me = lines.first(where: { $0.flags.contains("myself") }), me.flags.contains("slave") {
                    linked = ((try? cli(node, "INFO", "replication")) ?? "").contains("master_link_status:up")
                }
                if info.contains("cluster_state:ok") && knownReplicas == replicas && linked { break }
                guard monotonicSeconds() - start < 30 else {
                    throw HarnessError("the cluster did not settle within 30 s: \(node) says \(info.prefix(80))")
                }
                sleepSeconds(0.05)
            }
        }
        // Redis 7.0 lists a replica in CLUSTER SLOTS only once its replication offset is above 0, that is once its
        // master has written something: a FLUSHALL on each (empty) master does, and every node then lists them all.
        guard replicas > 0 else { return }
        for (master, _) in try self.masters() { _ = try cli(master, "FLUSHALL") }
        for node in nodes {
            while true {
                let slots = (try? cli(node, "CLUSTER", "SLOTS")) ?? ""
                let listed = slots.split(separator: "\n").filter { $0.count == 40 && $0.allSatisfy(\.isHexDigit) }.count
                if listed == masters + replicas { break }
                guard monotonicSeconds() - start < 30 else {
                    throw HarnessError(
                        "\(node) lists \(listed) nodes in CLUSTER SLOTS, not \(masters + replicas), after 30 s")
                }
                sleepSeconds(0.05)
            }
        }
    }

    private static func startNode(
        in directory: String, cluster: Bool, password: String?, settings: [String], port given: Int? = nil
    ) throws(HarnessError) -> Node {
        guard let server = findExecutable("redis-server") else {
            throw HarnessError("redis-server is not installed (Debian: apt-get install redis-server redis-tools)")
        }
        guard let setpriv = findExecutable("setpriv") else {
            throw HarnessError("setpriv is not installed (Debian: util-linux)")
        }
        var lastFailure = ""
        for _ in 0..<8 {
            let port = if let given { given } else { try reservePort(cluster: cluster) }
            let nodeDirectory = directory + "/\(port)"
            mkdir(nodeDirectory, 0o755)
            var lines = [
                "port \(port)", "bind 127.0.0.1", "dir \(nodeDirectory)", "daemonize no",
                "logfile \(nodeDirectory)/redis.log", "appendonly yes", "appendfsync always", "save \"\"",
                // Snapshots (and the append-only file's base) uncompressed: the tests that a deletion leaves no
                // byte in a node's files search them for the deleted names, which LZF would hide, so that such a
                // test could pass with the names still there.
                "rdbcompression no",
            ]
            if cluster {
                // No wait for more replicas before a full sync (5 s by default): a replica is linked at once.
                lines += [
                    "cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 2000",
                    "repl-diskless-sync-delay 0",
                ]
            }
            if let password { lines += ["requirepass \(password)", "masterauth \(password)"] }
            lines += settings
            try writeFile(nodeDirectory + "/redis.conf", lines.joined(separator: "\n") + "\n")
            let pid = try NodeSpawner.shared.spawn(
                [setpriv, "--pdeathsig", "KILL", "--", server, nodeDirectory + "/redis.conf"],
                output: nodeDirectory + "/stdout.log")
            let node = Node(port: port, pid: pid, directory: nodeDirectory)
            LocalRedisCluster.track(pid)
            let start = monotonicSeconds()
            while monotonicSeconds() - start < 15 {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    LocalRedisCluster.untrack(pid)
                    break
                }
                let ping = try? redisCLI(port: port, password: password, ["PING"], scratch: nodeDirectory, timeout: 5)
                if ping?.output.hasPrefix("PONG") == true { return node }
                sleepSeconds(0.02)
            }
            let log = String(decoding: (try? readFile(nodeDirectory + "/redis.log")) ?? [], as: UTF8.self)
            lastFailure = "port \(port): " + String(log.suffix(300))
            end([node], directory: nil)
            removeTree(nodeDirectory)
            // Another process took the port between the check and the start: try another one.
            if given != nil || !log.contains("Address already in use") { break }
        }
        throw HarnessError("redis-server did not start: \(lastFailure)")
    }

    static func redisCLI(port: Int?, password: String?, _ arguments: [String], scratch: String, timeout: Double)
        throws(HarnessError) -> ProcessOutcome
    {
        guard let cli = findExecutable("redis-cli") else {
            throw HarnessError("redis-cli is not installed (Debian: apt-get install redis-tools)")
        }
        var environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        if let password { environment["REDISCLI_AUTH"] = password }
        let target = port.map { ["-h", "127.0.0.1", "-p", String($0)] } ?? []
        let process = try ChildProcess(
            executable: cli, arguments: target + arguments, environment: environment, inputPath: nil, scratch: scratch)
        return process.wait(timeout: timeout)
    }

    static func isErrorReply(_ output: String) -> Bool {
        for prefix in ["ERR", "MOVED", "ASK", "WRONGPASS", "NOAUTH", "CLUSTERDOWN", "(error)"]
        where output.hasPrefix(prefix) {
            return true
        }
        return false
    }

    // MARK: - Ports, processes and clean-up

    /// A free loopback port that no other server of the harness will take: for a standalone server started later
    /// on it (`init(standaloneWithPassword:settings:port:)`).
    public static func reservePort() throws(HarnessError) -> Int { try reservePort(cluster: false) }

    /// A port that is free, and whose bus port (`+10000`) is free too for a cluster node; never handed out twice
    /// in one process.
    private static func reservePort(cluster: Bool) throws(HarnessError) -> Int {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let port = Int.random(in: 15000..<22000, using: &generator)
            let taken = reservedPorts.withLock { reserved in
                if reserved.contains(port) { return true }
                reserved.insert(port)
                return false
            }
            if taken { continue }
            if canBind(port) && (!cluster || canBind(port + 10000)) { return port }
        }
        throw HarnessError("found no free loopback port for redis-server in 15000..<22000")
    }

    private static func canBind(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0
    }

    private static func makeDirectory(_ label: String) throws(HarnessError) -> String {
        var template = Array("/tmp/suggest-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard let made else { throw HarnessError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        return String(cString: made)
    }

    /// Kills nodes, reaps them, and removes `directory` when given.
    private static func end(_ nodes: [Node], directory: String?) {
        for node in nodes where untrack(node.pid) {
            Glibc.kill(node.pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(node.pid, &status, 0) < 0 && errno == EINTR {}
        }
        if let directory { removeTree(directory) }
    }

    static func findExecutable(_ name: String) -> String? { SuggestTestSupport.findExecutable(name) }

    private static let reservedPorts = Mutex<Set<Int>>([])
    private static let sharedClusters = Mutex<[String: LocalRedisCluster]>([:])
    /// Running node processes and the directories of clusters not yet stopped, for the exit hook.
    private static let live = Mutex<(pids: Set<pid_t>, directories: [ObjectIdentifier: String])>(([], [:]))

    private static func track(_ pid: pid_t) {
        _ = exitHook
        live.withLock { _ = $0.pids.insert(pid) }
    }

    /// Forgets a pid; `true` when it was still tracked (so it is killed and reaped once).
    @discardableResult
    private static func untrack(_ pid: pid_t) -> Bool {
        live.withLock { $0.pids.remove(pid) != nil }
    }

    private static func register(_ cluster: LocalRedisCluster) {
        live.withLock { $0.directories[ObjectIdentifier(cluster)] = cluster.directory }
    }

    private static func unregister(_ cluster: LocalRedisCluster) {
        live.withLock { _ = $0.directories.removeValue(forKey: ObjectIdentifier(cluster)) }
    }

    /// Stops what is left when the process exits normally (shared clusters are never deinitialized).
    private static let exitHook: Void = {
        atexit {
            let (pids, directories) = LocalRedisCluster.live.withLock { live in
                defer { live = ([], [:]) }
                return (live.pids, Array(live.directories.values))
            }
            for pid in pids { Glibc.kill(pid, SIGKILL) }
            for pid in pids {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            }
            for directory in directories { removeTree(directory) }
        }
    }()
}

/// The one thread that starts `redis-server` processes. `PR_SET_PDEATHSIG` (what `setpriv --pdeathsig` sets) fires
/// when the thread that forked the child ends; this thread ends only with the process, so a node outlives no test
/// process and dies with no test thread.
private final class NodeSpawner: Sendable {
    static let shared = NodeSpawner()

    private final class Job: Sendable {
        let arguments: [String]
        let output: String
        let result = Mutex<Result<pid_t, HarnessError>?>(nil)
        init(arguments: [String], output: String) {
            self.arguments = arguments
            self.output = output
        }
    }

    private let jobs = Mutex<[Job]>([])
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private init() {
        var ends: [Int32] = [-1, -1]
        pipe(&ends)
        wakeRead = ends[0]
        wakeWrite = ends[1]
        var thread = pthread_t()
        pthread_create(
            &thread, nil,
            { _ in
                NodeSpawner.shared.run()
                return nil
            }, nil)
        pthread_detach(thread)
    }

    /// Starts `arguments` (the program first) from the spawner thread, output to `output`.
    func spawn(_ arguments: [String], output: String) throws(HarnessError) -> pid_t {
        guard wakeWrite >= 0 else { throw HarnessError("the spawner thread has no pipe") }
        let job = Job(arguments: arguments, output: output)
        jobs.withLock { $0.append(job) }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        let start = monotonicSeconds()
        while monotonicSeconds() - start < 30 {
            if let result = job.result.withLock({ $0 }) { return try result.get() }
            sleepSeconds(0.001)
        }
        throw HarnessError("the spawner thread did not start \(arguments.first ?? "") within 30 s")
    }

    private func run() {
        var byte: UInt8 = 0
        while true {
            let count = read(wakeRead, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                let result = NodeSpawner.start(job.arguments, output: job.output)
                job.result.withLock { $0 = result }
            }
        }
    }

    private static func start(_ arguments: [String], output: String) -> Result<pid_t, HarnessError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        return ChildProcess.spawn(
            arguments[0], arguments: arguments, environment: ["PATH=/usr/bin:/bin", "LANG=C.UTF-8"], actions: &actions)
    }
}
