/// How a long-running process that checkpoints often (a server) spaces its rewrites of the file after deletions
/// (`Database.rewriteAfterDeletion(paced:)`): a rewrite that took `heldBackFrom` or longer is followed by a pause of
/// `pauseFactor` times its length, in which a deletion leaves its rewrite to the next checkpoint after the pause.
/// With the server's pacing a process rewrites at most a fifth of the time, however fast a client deletes or
/// unblocks, and a store that rewrites in under 50 ms (one person's history) is never held back.
public struct RewritePacing: Sendable, Equatable {
    /// Rewrites shorter than this are never followed by a pause.
    public var heldBackFrom: Duration
    /// The pause after a longer rewrite, in multiples of its length.
    public var pauseFactor: Int

    public init(heldBackFrom: Duration, pauseFactor: Int) {
        self.heldBackFrom = heldBackFrom
        self.pauseFactor = pauseFactor
    }

    /// A server's: 50 ms, four times.
    public static let server = RewritePacing(heldBackFrom: .milliseconds(50), pauseFactor: 4)
}
