import SuggestCore

/// A donation with the part of its recording that needs no store already done: its keys, the snapshot body it will
/// be stored under, and the content kinds it feeds. Made by a store's `DonationPreparer`, on any one thread.
///
/// `suggest import` prepares each donation on its parsing thread, so that the writing thread only looks things up
/// and inserts.
public struct PreparedDonation: Sendable {
    public let interaction: Interaction
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
    ///   - snapshotBody: `PreparedDonation.snapshotBody(of:)` of the intent, when the caller has it already.
    ///   - conversationKey, snapshotKey: given only by tests, to make two conversations or two snapshots share a
    ///     key as a hash collision would (once in billions otherwise).
    init(
        _ interaction: Interaction, types: UniformTypeTree, snapshotBody: [UInt8]? = nil, conversationKey: Int64? = nil,
        snapshotKey: Int64? = nil
    ) {
        self.interaction = interaction
        identifierKey = interaction.identifier.map { StableHash.key(interaction.account, $0) }
        self.conversationKey = conversationKey ?? StableHash.key(interaction.account, interaction.conversationIdentifier)
        self.snapshotBody = snapshotBody ?? Self.snapshotBody(of: interaction.intent)
        forcedSnapshotKey = snapshotKey
        contentKinds = types.contentKinds(of: interaction.intent.contentTypes)
    }

    /// The intent without its content types, in JSON: what `snapshots.body` holds.
    static func snapshotBody(of intent: SendMessageIntent) -> [UInt8] {
        var metadata = intent
        metadata.contentTypes = []
        var writer = JSONWriter()
        metadata.write(to: &writer)
        return writer.bytes
    }
}

/// Prepares donations for one store (`DonationStore.makePreparer()`), on one thread at a time: an import's parsing
/// thread.
///
/// It remembers each conversation's last few snapshots: a donation that says what one of its conversation's recent
/// donations said (most do: a direct conversation alternates between two, one per sender) shares that body's bytes
/// instead of writing the JSON again, which was the largest part of preparing.
public final class DonationPreparer {
    let types: UniformTypeTree
    /// Recent intents (without content types) and their bodies by conversation key, the latest last, at most
    /// `recentLimit` each; emptied when it reaches `cacheLimit` conversations, so that a history of millions of them
    /// does not keep millions of intents.
    private var recentSnapshots: [Int64: [(intent: SendMessageIntent, body: [UInt8])]] = [:]
    private static let recentLimit = 4
    private static let cacheLimit = 1 << 16

    init(types: UniformTypeTree) { self.types = types }

    public func prepare(_ interaction: Interaction) -> PreparedDonation {
        let conversationKey = StableHash.key(interaction.account, interaction.conversationIdentifier)
        var metadata = interaction.intent
        metadata.contentTypes = []
        // The body is the intent's alone, so intents of the same bytes share it whatever their keys (`==` would let
        // a name spelt with a combining accent take the body of the same name spelt precomposed).
        let body: [UInt8]
        if let recent = recentSnapshots[conversationKey]?.last(where: { $0.intent.hasSameBytes(as: metadata) }) {
            body = recent.body
        } else {
            body = PreparedDonation.snapshotBody(of: metadata)
            if recentSnapshots.count >= Self.cacheLimit { recentSnapshots.removeAll(keepingCapacity: true) }
            recentSnapshots[conversationKey, default: []].append((metadata, body))
            if recentSnapshots[conversationKey]!.count > Self.recentLimit { recentSnapshots[conversationKey]!.removeFirst() }
        }
        return PreparedDonation(interaction, types: types, snapshotBody: body, conversationKey: conversationKey)
    }
}

@available(*, unavailable)
extension DonationPreparer: Sendable {}

extension DonationStore {
    /// A preparer of donations for `importPreparedDonations`, with this store's content types, for one thread.
    public func makePreparer() -> DonationPreparer { DonationPreparer(types: types) }
}
