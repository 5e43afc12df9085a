/// An account's donations read one at a time, in the order `DonationStore.forEachDonation` gives them, by a reader
/// that takes them at its own pace: a response sent as fast as its client reads it.
///
/// It reads the store as it was when it was opened, and holds its connection until closed: close it as soon as the
/// reader is done (or gone), and use the connection for nothing else meanwhile.
public protocol DonationCursor: AnyObject {
    /// The next donation, or `nil` after the last.
    func next() throws -> Interaction?
    /// Lets go of what the cursor holds; `next` is not called again.
    func close()
}

/// A cursor over donations already read into memory: for a store that cannot keep a read open between calls.
public final class CollectedDonations: DonationCursor {
    private var donations: [Interaction]
    private var position = 0

    public init(_ donations: [Interaction]) { self.donations = donations }

    public func next() throws -> Interaction? {
        guard position < donations.count else { return nil }
        defer { position += 1 }
        return donations[position]
    }

    public func close() { donations = [] }
}
