/// Which donation a conversation is shown by (its name, picture and people, in a suggestion and a preselection):
/// the latest that describes it (`SendMessageIntent.describesConversation`), else, while none does, the latest.
///
/// A message received and donated with its sender only (as many apps donate one) leaves the conversation looking
/// as the last donation that named it: it showed raw identifiers and preselected no recipient. A rename or a new
/// picture shows at once; an older donation arriving late shows only if it is the latest that describes. Equal
/// dates go to the later recorded, as `ConversationRecord.apply`'s latest does. Every store folds this, in
/// recording order, when it records and when it rebuilds a conversation after a deletion, so both agree.
public struct ShownDonation: Sendable, Equatable {
    /// The date of the latest donation that describes the conversation; `nil` while none has.
    public var describedAt: Timestamp?

    public init(describedAt: Timestamp? = nil) { self.describedAt = describedAt }

    /// Folds one donation in.
    /// - Parameters:
    ///   - describes: its intent's `describesConversation`.
    ///   - isLatest: whether it is now the conversation's latest (`ConversationRecord.apply`'s answer).
    /// - Returns: whether the conversation is shown by this donation from now on.
    public mutating func takes(date: Timestamp, describes: Bool, isLatest: Bool) -> Bool {
        if describes {
            if let describedAt, date < describedAt { return false }
            describedAt = date
            return true
        }
        return describedAt == nil && isLatest
    }
}
