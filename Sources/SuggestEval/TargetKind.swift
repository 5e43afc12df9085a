/// What kind of send an evaluated donation was, for figures split by kind: the policies that win overall may
/// lose on one kind, and a history of another shape has another mix of them.
public enum TargetKind: String, Sendable, CaseIterable, Hashable {
    /// An answer to the latest incoming donation of the account: its conversation is the one that last wrote.
    case reply
    /// A conversation whose latest donation (either direction) is a week old or more.
    case idle
    /// A group conversation.
    case group
    /// None of the above.
    case other

    /// How the figures name it.
    public var title: String {
        switch self {
        case .reply: return "reply to the latest incoming"
        case .idle: return "idle for a week or more"
        case .group: return "group"
        case .other: return "other"
        }
    }
}

/// The kinds one send is of: `reply`, `idle` and `group` may come together; `other` is the empty set's.
public struct TargetKinds: OptionSet, Sendable, Hashable {
    /// One bit per kind: 1 `reply`, 2 `idle`, 4 `group`.
    public let rawValue: UInt8

    /// The kinds whose bits `rawValue` sets.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// An answer to the conversation that last wrote (`TargetKind.reply`).
    public static let reply = TargetKinds(rawValue: 1)
    /// A conversation silent for `idleAfter` or longer (`TargetKind.idle`).
    public static let idle = TargetKinds(rawValue: 2)
    /// A group conversation (`TargetKind.group`).
    public static let group = TargetKinds(rawValue: 4)

    /// Whether the send is of `kind`.
    public func includes(_ kind: TargetKind) -> Bool {
        switch kind {
        case .reply: return contains(.reply)
        case .idle: return contains(.idle)
        case .group: return contains(.group)
        case .other: return isEmpty
        }
    }

    /// How long a conversation must have been silent to count as idle.
    public static let idleAfter = 7 * 86_400.0
}
