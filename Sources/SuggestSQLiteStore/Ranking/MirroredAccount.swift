import SuggestCore

/// One account's ranking state as the store held it at one version (`StoreVersion`): every conversation's row as
/// random access reads it, the sorted lists as the indexes give them (the keys are the stored columns, not
/// recomputed), the account's learned weights and the store's retention. Immutable once built, so the server's
/// workers share it without a lock; `RankingMirror` hands it out only while the store is still at that version.
///
/// Conversations are known by slots (dense, from 0), which the mirrored `StoredRankingSource` uses as its handles;
/// `rowIDs` maps a slot back to its row for what is still read from SQLite (the latest intents, the people).
final class MirroredAccount: MirroredState {
    let account: String
    /// The store's version the state was read at.
    let version: StoreVersion
    let weights: LearnedWeights
    /// The store's retention settings at that version (a change of them is a commit, so a new version).
    let retention: Retention
    /// Whether the rows were built under the store's policy at that version (no rebuild owed nor under way: each
    /// step of one is a commit).
    let keysFollowThePolicy: Bool
    let rowIDs: [Int64]
    let slotsByRowID: [Int64: Int32]
    let identifiers: [String]
    let states: [ConversationState]
    let services: [String?]
    /// The content sums of slot `s` are entries `contentStart[s] ..< contentStart[s + 1]` of `contentKinds` (an
    /// index into `kindNames`) and `contentSums`.
    let contentStart: [Int32]
    let contentKinds: [Int32]
    let contentSums: [Double]
    let kindIndex: [ByteKey: Int32]
    /// One sorted list per channel, for every conversation, each service and each content kind.
    let allLists: [MirroredList]
    let serviceLists: [ByteKey: [MirroredList]]
    let kindLists: [ByteKey: [MirroredList]]
    /// How many channels have lists: the policy's.
    let channelCount: Int
    /// About how many bytes the arrays above hold, and the cache's floors beyond them: what the mirrors' budget
    /// counts.
    let estimatedBytes: Int

    /// What queries read from SQLite beside the mirror, and the answers they gave, at its version.
    let cache: MirrorReadCache

    var count: Int { rowIDs.count }

    private init(
        account: String, version: StoreVersion, weights: LearnedWeights, retention: Retention,
        keysFollowThePolicy: Bool, rows: [StoredRankingSource.Row], slotsByRowID: [Int64: Int32],
        content: [ContentRow], kindNames: [String], channelCount: Int, answerCounters: RankedAnswers.Counters
    ) {
        self.account = account
        self.version = version
        self.weights = weights
        self.retention = retention
        self.keysFollowThePolicy = keysFollowThePolicy
        self.channelCount = channelCount
        self.slotsByRowID = slotsByRowID
        let count = rows.count
        rowIDs = rows.map(\.rowID)
        let identifiers = rows.map(\.identifier)
        let states = rows.map(\.state)
        let services = rows.map(\.serviceName)
        self.identifiers = identifiers
        self.states = states
        self.services = services

        // Content rows grouped by slot (a counting sort keeps each slot's rows in the order read).
        var start = [Int32](repeating: 0, count: count + 1)
        for row in content { start[Int(row.slot) + 1] += 1 }
        for index in 0..<count { start[index + 1] += start[index] }
        var fill = start
        var kinds = [Int32](repeating: 0, count: content.count)
        var sums = [Double](repeating: 0, count: content.count)
        for row in content {
            let at = Int(fill[Int(row.slot)])
            fill[Int(row.slot)] += 1
            kinds[at] = row.kind
            sums[at] = row.sum
        }
        contentStart = start
        contentKinds = kinds
        contentSums = sums
        var index: [ByteKey: Int32] = [:]
        for (position, name) in kindNames.enumerated() { index[ByteKey(name)] = Int32(position) }
        kindIndex = index

        let all = (0..<channelCount).map { channel in
            MirroredList(sorting: states.indices.map { (states[$0].channels[channel], Int32($0)) })
        }
        allLists = all
        // A service's lists are the lists of all, split by service in one pass over each: their order is already
        // right. (A pass over each list for each service took an account of 80,000 services 38 s of CPU.)
        var serviceNames: [ByteKey] = []
        var serviceNumbers: [ByteKey: Int] = [:]
        var serviceSizes: [Int] = []
        var serviceOfSlot = [Int](repeating: -1, count: count)
        for (slot, service) in services.enumerated() {
            guard let service else { continue }
            let name = ByteKey(service)
            let number = serviceNumbers[name] ?? serviceNames.count
            if number == serviceNames.count {
                serviceNumbers[name] = number
                serviceNames.append(name)
                serviceSizes.append(0)
            }
            serviceOfSlot[slot] = number
            serviceSizes[number] += 1
        }
        var split = [[MirroredList]](repeating: [], count: serviceNames.count)
        for list in all {
            var lists = serviceSizes.map { size in
                var entries = MirroredList()
                entries.keys.reserveCapacity(size)
                entries.slots.reserveCapacity(size)
                return entries
            }
            for (key, slot) in zip(list.keys, list.slots) {
                let number = serviceOfSlot[Int(slot)]
                guard number >= 0 else { continue }
                lists[number].keys.append(key)
                lists[number].slots.append(slot)
            }
            for (number, entries) in lists.enumerated() { split[number].append(entries) }
        }
        var serviceLists: [ByteKey: [MirroredList]] = [:]
        for (number, name) in serviceNames.enumerated() { serviceLists[name] = split[number] }
        self.serviceLists = serviceLists
        // A kind's lists carry the keys stored with its rows.
        var byKind: [Int32: [Int]] = [:]
        for (position, row) in content.enumerated() { byKind[row.kind, default: []].append(position) }
        var kindLists: [ByteKey: [MirroredList]] = [:]
        for (kind, positions) in byKind {
            kindLists[ByteKey(kindNames[Int(kind)])] = (0..<channelCount).map { channel in
                MirroredList(sorting: positions.map { (content[$0].keys[channel], content[$0].slot) })
            }
        }
        self.kindLists = kindLists

        // Element sizes, the row dictionary at its load factor, and each long string's heap buffer.
        var bytes = count * (8 + 24 + 16 + MemoryLayout<ConversationState>.stride + 16 + 4)
        for identifier in identifiers where identifier.utf8.count > 15 { bytes += identifier.utf8.count + 32 }
        bytes += content.count * 12
        var listEntries = channelCount * count
        for lists in serviceLists.values { listEntries += lists.reduce(0) { $0 + $1.keys.count } }
        for lists in kindLists.values { listEntries += lists.reduce(0) { $0 + $1.keys.count } }
        let arrayBytes = bytes + listEntries * 12
        estimatedBytes = MirrorReadCache.budgetedBytes(ofMirrorHolding: arrayBytes)
        cache = MirrorReadCache(answerCounters: answerCounters, mirrorBytes: arrayBytes)
    }

    /// One row of `conversation_content`, by slot and kind index.
    struct ContentRow {
        var slot: Int32
        var kind: Int32
        var sum: Double
        var keys: SIMD4<Double>
    }

    /// Reads one account's state in `database`'s current read transaction.
    /// - Parameters:
    ///   - version: what the mirror's connection said of the store before and after the read.
    ///   - policy: the store's policy: its channels, the lists to build, and its fingerprint.
    ///   - answerCounters: where the mirror counts the answers its queries keep and reuse.
    static func read(
        account: String, version: StoreVersion, policy: FrecencyPolicy, answerCounters: RankedAnswers.Counters,
        in database: Database
    ) throws -> MirroredAccount {
        let channelCount = policy.channels.count
        let weights = try LearnedWeightsTable.read(account: account, in: database)
        let retention = try database.storedRetention()
        let keysFollowThePolicy = try !database.owesRebuild(to: policy.stateFingerprint)
        let select = try database.uncachedStatement(
            "SELECT \(StoredRankingSource.rowColumns) \(StoredRankingSource.rowSource) WHERE c.account = ?")
        try select.reset([.text(account)])
        var rows: [StoredRankingSource.Row] = []
        while try select.step() {
            if let row = StoredRankingSource.row(select) { rows.append(row) }
        }
        var slots: [Int64: Int32] = [:]
        slots.reserveCapacity(rows.count)
        for (slot, row) in rows.enumerated() { slots[row.rowID] = Int32(slot) }

        let contentSelect = try database.uncachedStatement(
            "SELECT conversation_id, kind, sum, c0, c1, c2, c3 FROM conversation_content WHERE account = ?")
        try contentSelect.reset([.text(account)])
        var kindNames: [String] = []
        var kinds: [ByteKey: Int32] = [:]
        var content: [ContentRow] = []
        while try contentSelect.step() {
            guard let slot = slots[contentSelect.int(0)], let name = contentSelect.text(1) else { continue }
            let key = ByteKey(name)
            let kind: Int32
            if let known = kinds[key] {
                kind = known
            } else {
                kind = Int32(kindNames.count)
                kinds[key] = kind
                kindNames.append(name)
            }
            content.append(
                ContentRow(
                    slot: slot, kind: kind, sum: contentSelect.double(2),
                    keys: SIMD4(
                        contentSelect.double(3), contentSelect.double(4), contentSelect.double(5), contentSelect.double(6))))
        }
        return MirroredAccount(
            account: account, version: version, weights: weights, retention: retention,
            keysFollowThePolicy: keysFollowThePolicy, rows: rows,
            slotsByRowID: slots, content: content, kindNames: kindNames, channelCount: channelCount,
            answerCounters: answerCounters)
    }

    /// The list that sorted access to `list` walks, or `nil` when the mirror has none for its channel (a channel
    /// past the policy's): the query is then answered from SQLite.
    func entries(_ list: SortedList) -> MirroredList? {
        guard list.channel >= 0, list.channel < channelCount else { return nil }
        switch list.scope {
        case .all: return allLists[list.channel]
        case .service(let service): return serviceLists[ByteKey(service)]?[list.channel] ?? MirroredList()
        case .contentKind(let kind): return kindLists[ByteKey(kind)]?[list.channel] ?? MirroredList()
        }
    }

    /// The random access of one slot, as `StoredRankingSource.candidate` reads it from SQLite.
    func candidate(_ slot: Int32, handle: ConversationHandle, kinds: [Int32?]) -> RankingCandidate {
        let index = Int(slot)
        var sums: [Double] = []
        if !kinds.isEmpty {
            sums = Array(repeating: LogSpace.zero, count: kinds.count)
            for entry in Int(contentStart[index])..<Int(contentStart[index + 1]) {
                let kind = contentKinds[entry]
                for (position, asked) in kinds.enumerated() where asked == kind { sums[position] = contentSums[entry] }
            }
        }
        return RankingCandidate(
            conversation: handle, conversationIdentifier: identifiers[index], state: states[index], contentSums: sums,
            serviceName: services[index])
    }

    /// The kinds' indices, `nil` for a kind no conversation of the account has.
    func kindIndices(_ kinds: [String]) -> [Int32?] { kinds.map { kindIndex[ByteKey($0)] } }
}
