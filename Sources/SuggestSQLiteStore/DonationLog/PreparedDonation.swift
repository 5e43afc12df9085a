import CSystem
import SuggestCore

/// A donation with the part of its recording that needs no store already done: its keys, the snapshot body it will
/// be stored under, and the content kinds it feeds. Made by a store's `DonationPreparer`, on any one thread.
///
/// `suggest import` prepares each donation on its parsing thread, so that the writing thread only looks things up
/// and inserts.
package struct PreparedDonation: Sendable {
    package private(set) var interaction: Interaction
    /// `StableHash.key(account, identifier)`, when the donation names its identifier.
    let identifierKey: Int64?
    /// `StableHash.key(account, conversationIdentifier)`: how the writer finds the conversation's row.
    let conversationKey: Int64
    /// The intent without its content types, as `snapshots.body` holds it: what the conversation looked like.
    let snapshotBody: [UInt8]
    /// `StableHash.key` of the body (`snapshots.body_key`), computed by the writer only for a body it has not met:
    /// hashing every body here, on the thread that limits a large import, was about a twentieth of that thread's work.
    var snapshotKey: Int64 {
        if let forcedSnapshotKey { return forcedSnapshotKey }
        var hash = StableHash()
        snapshotBody.withUnsafeBufferPointer { hash.combine(utf8: $0) }
        return Int64(bitPattern: hash.value)
    }
    private let forcedSnapshotKey: Int64?
    /// The distinct content kinds of the content types, in order, in the store's type tree.
    let contentKinds: [String]

    /// - Parameters:
    ///   - snapshotBody: the intent's `snapshotBody`, when the caller has it already.
    ///   - conversationKey, snapshotKey: given only by tests, to make two conversations or two snapshots share a
    ///     key as a hash collision would (once in billions otherwise).
    init(
        _ interaction: Interaction, types: UniformTypeTree, snapshotBody: [UInt8]? = nil, contentKinds: [String]? = nil,
        conversationKey: Int64? = nil, snapshotKey: Int64? = nil
    ) {
        self.interaction = interaction
        identifierKey = interaction.identifier.map { StableHash.key(interaction.account, $0) }
        self.conversationKey = conversationKey ?? StableHash.key(interaction.account, interaction.conversationIdentifier)
        self.snapshotBody = snapshotBody ?? interaction.intent.snapshotBody
        forcedSnapshotKey = snapshotKey
        self.contentKinds = contentKinds ?? types.contentKinds(of: interaction.intent.contentTypes)
    }

    /// The same donation at another date (a date just ahead of the store's clock is recorded as of the clock).
    func dated(_ date: Timestamp) -> PreparedDonation {
        var copy = self
        copy.interaction.date = date
        return copy
    }
}

/// Prepares donations for one store (`DonationStore.makePreparer()`), on one thread at a time: an import's parsing
/// thread.
///
/// Two memories spare it most of the work, each bounded so that a history of millions of conversations does not
/// fill memory:
/// - As the `IntentMemo` of the decoder (`Interaction(jsonBytes:defaultAccount:intents:)`), it keeps intents by
///   the bytes of their JSON, with the snapshot body and content kinds prepared for them: a donation whose intent
///   repeats one of them byte for byte (most do: a direct conversation alternates between two, one per sender)
///   is neither decoded nor prepared again, only matched (at 10M, the intents' decoding and comparison were half
///   of the parsing thread, which limits an import).
/// - Each conversation's last few snapshots: a donation that says what one of its conversation's recent donations
///   said in other bytes (other content types, members in another order) shares that body's bytes instead of
///   writing the JSON again.
package final class DonationPreparer: IntentMemo {
    let types: UniformTypeTree
    /// Recent intents (without content types) and their bodies by conversation key, the latest last, at most
    /// `recentLimit` each; emptied when it reaches `cacheLimit` conversations.
    private var recentSnapshots: [Int64: [(intent: SendMessageIntent, body: [UInt8])]] = [:]
    private static let recentLimit = 4
    private static let cacheLimit = 1 << 16
    /// What `recentSnapshots` may hold, counted as `decodedBytes` of each body: a history of intents naming a
    /// thousand people each held a gigabyte in 6,000 conversations before this bound.
    private static let recentByteLimit = 64 << 20
    private var recentBytes = 0
    /// What an intent decoded from `n` bytes of JSON takes, about, with its JSON: a person of 28 bytes of JSON is a
    /// value of about 100.
    static func decodedBytes(_ n: Int) -> Int { 4 * n }

    /// Intents by a hash of their JSON's bytes, in two generations: when `memos` reaches `memoLimit` intents or
    /// `memoByteLimit` bytes of JSON and bodies, it becomes `olderMemos` (the generation before is dropped), and a
    /// memo found there moves back. The intents a history keeps repeating stay (a history of 100,000
    /// conversations has about 200,000 intents, two per direct conversation, most of them rare), and memory stays
    /// bounded whatever their size: two generations of 64 MiB, JSON, bodies and decoded intents (`decodedBytes`).
    private var memos: [UInt64: Memo] = [:]
    private var olderMemos: [UInt64: Memo] = [:]
    private let memoLimit: Int
    private static let memoByteLimit = 64 << 20
    /// The bytes of JSON, decoded intents and bodies that `memos` holds.
    private var memoBytes = 0
    /// The memo of the intent the decoder read last, until `prepare` takes it.
    private var lastMemo: Memo?

    private final class Memo {
        let json: [UInt8]
        let intent: SendMessageIntent
        var snapshotBody: [UInt8]?
        var contentKinds: [String]?

        init(json: [UInt8], intent: SendMessageIntent) {
            self.json = json
            self.intent = intent
        }
    }

    /// - Parameter memoLimit: the intents of one generation (small in tests, to make generations turn over).
    init(types: UniformTypeTree, memoLimit: Int = 1 << 16) {
        self.types = types
        self.memoLimit = memoLimit
    }

    /// Decodes and prepares one line, with this preparer as the decoder's memory of intents.
    /// - Parameter check: a further check of the decoded donation (an import's account, say), before it is prepared.
    package func prepare(
        line bytes: UnsafeBufferPointer<UInt8>, defaultAccount: String,
        check: (Interaction) throws(InputError) -> Void = { _ in }
    ) -> Result<PreparedDonation, InputError> {
        lastMemo = nil
        do {
            let interaction = try Interaction(jsonBytes: bytes, defaultAccount: defaultAccount, intents: self)
            try check(interaction)
            // The memo of this line's intent, if the decoder matched or remembered one.
            let memo = lastMemo
            lastMemo = nil
            return .success(prepare(interaction, memo: memo))
        } catch {
            return .failure(error)
        }
    }

    package func intent(forJSON bytes: UnsafeBufferPointer<UInt8>) -> SendMessageIntent? {
        let hash = Self.hash(bytes)
        var found = memos[hash]
        if found == nil, let older = olderMemos[hash] {
            found = older
            keep(older, hash: hash)
        }
        guard let memo = found, memo.json.count == bytes.count,
            memo.json.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
        else { return nil }
        lastMemo = memo
        return memo.intent
    }

    package func fastPathGaveUp() { lastMemo = nil }

    package func remember(_ intent: SendMessageIntent, forJSON bytes: UnsafeBufferPointer<UInt8>) {
        let memo = Memo(json: Array(bytes), intent: intent)
        keep(memo, hash: Self.hash(bytes))
        lastMemo = memo
    }

    private func keep(_ memo: Memo, hash: UInt64) {
        if memos.count >= memoLimit || memoBytes >= Self.memoByteLimit {
            olderMemos = memos
            memos = [:]
            memos.reserveCapacity(memoLimit)
            memoBytes = 0
        }
        memos[hash] = memo
        memoBytes += Self.decodedBytes(memo.json.count) + (memo.snapshotBody?.count ?? 0)
    }

    package func prepare(_ interaction: Interaction) -> PreparedDonation { prepare(interaction, memo: nil) }

    /// - Parameter memo: the memo of the interaction's intent, whose body and content kinds are reused, or kept.
    private func prepare(_ interaction: Interaction, memo: Memo?) -> PreparedDonation {
        let conversationKey = StableHash.key(interaction.account, interaction.conversationIdentifier)
        if let memo, let body = memo.snapshotBody, let kinds = memo.contentKinds {
            return PreparedDonation(
                interaction, types: types, snapshotBody: body, contentKinds: kinds, conversationKey: conversationKey)
        }
        var metadata = interaction.intent
        metadata.contentTypes = []
        // The body is the intent's alone, so intents of the same bytes share it whatever their keys (`==` would let
        // a name spelt with a combining accent take the body of the same name spelt precomposed).
        let body: [UInt8]
        if let recent = recentSnapshots[conversationKey]?.last(where: { $0.intent.hasSameBytes(as: metadata) }) {
            body = recent.body
        } else {
            body = metadata.snapshotBody
            if recentSnapshots.count >= Self.cacheLimit || recentBytes >= Self.recentByteLimit {
                recentSnapshots.removeAll(keepingCapacity: true)
                recentBytes = 0
            }
            recentSnapshots[conversationKey, default: []].append((metadata, body))
            recentBytes += Self.decodedBytes(body.count)
            if recentSnapshots[conversationKey]!.count > Self.recentLimit { recentSnapshots[conversationKey]!.removeFirst() }
        }
        let kinds = types.contentKinds(of: interaction.intent.contentTypes)
        if let memo, memo.snapshotBody == nil { memoBytes += body.count }
        memo?.snapshotBody = body
        memo?.contentKinds = kinds
        return PreparedDonation(
            interaction, types: types, snapshotBody: body, contentKinds: kinds, conversationKey: conversationKey)
    }

    /// A fast 64-bit hash of bytes, 8 at a time (the memo compares the bytes themselves too).
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawBufferPointer(bytes)
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
        var offset = 0
        while offset + 8 <= raw.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            offset += 8
        }
        while offset < raw.count {
            hash = (hash ^ UInt64(raw[offset])) &* 0xC4CE_B9FE_1A85_EC53
            offset += 1
        }
        return hash ^ (hash >> 29)
    }
}

@available(*, unavailable)
extension DonationPreparer: Sendable {}

extension SQLiteDonationStore {
    /// A preparer of donations for `importPreparedDonations`, with this store's content types, for one thread.
    package func makePreparer() -> DonationPreparer { DonationPreparer(types: types) }
}
