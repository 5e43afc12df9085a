/// How much one maintenance step may do: a server runs many small steps between requests, a command runs one
/// that finishes the work.
public struct MaintenanceBudget: Sendable, Equatable {
    /// Conversations whose state may be recomputed in this step (expiry recomputes the ones it touched, a new policy
    /// every one); folding an account's learned weights again reads every one of its conversations and counts them
    /// all, and a step folds at least one account when any budget is left. A value below 1 is taken as 1: a step
    /// allowed none did nothing and never reported complete, so a loop until complete never ended.
    public var conversations: Int {
        get { allowed }
        set { allowed = max(1, newValue) }
    }
    private var allowed: Int

    /// A step that may recompute up to `conversations` conversations (at least one).
    public init(conversations: Int) { allowed = max(1, conversations) }

    /// A step that finishes whatever there is to do.
    public static let unbounded = MaintenanceBudget(conversations: .max)
    /// A step short enough to run between requests (a few milliseconds on an embedded store).
    public static let step = MaintenanceBudget(conversations: 256)
}

/// What a maintenance step did, and whether work is left.
public struct MaintenanceReport: Sendable, Equatable {
    /// Donations deleted for being older than the retention allows.
    public var expired = DeletionReport()
    /// Conversations whose state was rebuilt under the store's current policy.
    public var recomputedConversations = 0
    /// Accounts whose learned weights were folded again from their remaining donations (after an expiry that
    /// stopped part-way, an upgrade, or a write by a store with fixed weights).
    public var foldedAccounts = 0
    /// Whether this step found every account's learned weights learned under another rule than this version's (an
    /// upgrade, or a process of another version writing the store) and marked them all to be folded again. Seen
    /// again and again, it says that another version's process is running beside this one, each undoing the other.
    public var weightsRuleChanged = false
    /// Whether nothing is left to do for the account (until time passes or the policy changes again).
    public var isComplete = true

/// A step that did nothing and left nothing to do.
    public init() {}
}
