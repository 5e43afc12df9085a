import SuggestCore

/// A donation with the part of its recording that needs no store already done: its keys, the snapshot body it will
/// be stored under, and the content kinds it feeds. Made by a store's `DonationPreparer`, on any thread.
///
/// `suggest import` prepares each donation on its parsing thread, so that the writing thread, an import's
/// bottleneck, only looks things up and inserts.
public struct PreparedDonation: Sendable {
    public let interaction: Interaction
    /// `StableHash.key(account, identifier)`, when the donation names its identifier.
    let identifierKey: Int64?
    /// `StableHash.key(account, conversationIdentifier)`: how the writer finds the conversation's row.
    let conversationKey: Int64
    /// The intent without its content types, as `snapshots.body` holds it: what the conversation looked like.
    let snapshotBody: [UInt8]
    /// `StableHash.key` of the body (`snapshots.body_key`), computed by the writer only for a body it has not met:
    /// hashing every body here, on the thread that limits a large import, was a tenth of that thread's work.
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
    ///   - conversationKey, snapshotKey: given only by tests, to make two conversations or two snapshots share a
    ///     key as a hash collision would (once in billions otherwise).
    init(
        _ interaction: Interaction, types: UniformTypeTree, conversationKey: Int64? = nil, snapshotKey: Int64? = nil
    ) {
        self.interaction = interaction
        identifierKey = interaction.identifier.map { StableHash.key(interaction.account, $0) }
        self.conversationKey = conversationKey ?? StableHash.key(interaction.account, interaction.conversationIdentifier)
        var metadata = interaction.intent
        metadata.contentTypes = []
        var writer = JSONWriter()
        metadata.write(to: &writer)
        snapshotBody = writer.bytes
        forcedSnapshotKey = snapshotKey
        contentKinds = types.contentKinds(of: interaction.intent.contentTypes)
    }
}

/// Prepares donations for one store (`DonationStore.preparer`): a value that any thread may use.
public struct DonationPreparer: Sendable {
    let types: UniformTypeTree

    public func prepare(_ interaction: Interaction) -> PreparedDonation {
        PreparedDonation(interaction, types: types)
    }
}

extension DonationStore {
    /// Prepares donations for `importDonations` with this store's content types, on any thread.
    public var preparer: DonationPreparer { DonationPreparer(types: types) }
}
