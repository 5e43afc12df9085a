/// The parameters of a frecency score: decay channels, donation weights and query-time context.
///
/// A conversation's score at time `t` is a sum of non-negative terms, then scaled by feedback:
///
///     base(t)  = Σ_m β_m · Σ_i w_m(i) · 2^(-(t - t_i) / h_m)          decay channels
///     score(t) = ( base(t) + π · m · (1 + base(t)) )                    m people of the shared image in it
///              · (1 + γ · s)                                            s: share of donations of the shared kinds
///              · g^(isGroup) · ℓ^(times "suggest less")
///
/// Each channel is kept per conversation as `A_m = ln Σ_i w_m(i) · e^(λ_m · t_i)`, so one donation updates it in
/// O(1) and its order never changes as time passes; the term is `β_m · e^(A_m - λ_m · t)`.
public struct FrecencyPolicy: Sendable, Hashable {
    /// How a channel combines the donations of a conversation.
    public enum Aggregation: Sendable, Hashable {
        /// `A = ln Σ_i w(i) · e^(λ·t_i)`: every donation adds its decayed weight (frecency).
        case sum
        /// `A = ln w(last) + λ·t_last`: only the latest donation (either direction) counts, with the weight of its
        /// direction, so the term is that weight decayed since the latest message: recency by direction. A later
        /// donation replaces the key (it may go down, for example when an outgoing message answers an incoming one
        /// and outgoing weighs less); the key stays time-invariant, so the channel keeps its sorted list.
        case latest
    }

    /// One exponentially decaying sum (or latest value) of donations.
    public struct Channel: Sendable, Hashable {
        /// A short name for explanations: `short-term`, `long-term`.
        public var name: String
        /// Seconds after which a donation counts half.
        public var halfLife: Double
        /// The channel's share of the score (`β`).
        public var weight: Double
        /// What one outgoing donation adds (`w`); a weight of 0, here or for another direction, leaves the channel
        /// alone.
        public var outgoing: Double
        /// What one incoming donation adds.
        public var incoming: Double
        /// What one donation of unspecified direction adds.
        public var unspecified: Double
        /// Added to `outgoing` for a share that started from a suggestion (the engaged-suggestion signal).
        public var engagedBonus: Double
        /// What a donation's weight is multiplied by when its conversation is a group (1: groups count like
        /// people; 0: the channel ignores groups).
        public var group: Double
        /// Sum of all donations (frecency) or the latest one only (recency).
        public var aggregation: Aggregation

        /// A channel; nothing is checked, so the values must make sense: a positive half-life, weights of 0 or more.
        /// - Parameters:
        ///   - name: a short name for explanations.
        ///   - halfLife: seconds after which a donation counts half.
        ///   - weight: the channel's share of the score (`β`).
        ///   - outgoing: what one outgoing donation adds.
        ///   - incoming: what one incoming donation adds.
        ///   - unspecified: what one donation of unspecified direction adds; `nil` for the incoming weight.
        ///   - engagedBonus: added to `outgoing` for a share started from a suggestion.
        ///   - group: the multiplier of a donation to a group.
        ///   - aggregation: sum of all donations, or the latest one only.
        public init(
            name: String, halfLife: Double, weight: Double, outgoing: Double = 1, incoming: Double,
            unspecified: Double? = nil, engagedBonus: Double = 0, group: Double = 1, aggregation: Aggregation = .sum
        ) {
            self.name = name
            self.halfLife = halfLife
            self.weight = weight
            self.outgoing = outgoing
            self.incoming = incoming
            self.unspecified = unspecified ?? incoming
            self.engagedBonus = engagedBonus
            self.group = group
            self.aggregation = aggregation
        }

        /// `λ = ln 2 / halfLife`.
        public var rate: Double { 0.693_147_180_559_945_3 / halfLife }

        /// The weight one donation adds to this channel.
        public func donationWeight(_ direction: InteractionDirection, engaged: Bool, isGroup: Bool = false) -> Double {
            let weight: Double
            switch direction {
            case .outgoing: weight = outgoing + (engaged ? engagedBonus : 0)
            case .incoming: weight = incoming
            case .unspecified: weight = unspecified
            }
            return isGroup ? weight * group : weight
        }
    }

    /// At most this many channels: their accumulators live in a fixed-size vector.
    public static let maximumChannels = 4

    /// The decay channels, 1 to `maximumChannels`, in the order of `ConversationState.channels` and of the sorted
    /// lists' channel numbers.
    public let channels: [Channel]
    /// `γ`: when the caller says what is being shared, a conversation's score is multiplied by `1 + γ·s`, where
    /// `s` is the share (decayed with `contentHalfLife`) of its donations that carried that kind of content.
    public let contentWeight: Double
    /// Half-life of the per-kind content sums and of the total they are shares of.
    public let contentHalfLife: Double
    /// `π`: how much each person in the shared image who is in a conversation lifts it: the term is
    /// `π · m · (1 + score)` for `m` such people.
    public let peopleWeight: Double
    /// `g`: the factor applied to group conversations (1 = no preference).
    public let groupFactor: Double
    /// `ℓ`: the factor for each "suggest less" feedback.
    public let lessFactor: Double
    /// Each channel's rate and the logarithms of its weights, computed once: the hot path of `apply` then needs
    /// no division and no `log` of its own.
    let decay: [ChannelDecay]

    struct ChannelDecay: Sendable, Hashable {
        let rate: Double
        let logOutgoing: Double
        let logEngaged: Double
        let logIncoming: Double
        let logUnspecified: Double
        /// `ln` of the group multiplier; 0 when groups count like people.
        let logGroup: Double
        let isLatest: Bool

        init(_ channel: Channel) {
            rate = channel.rate
            logOutgoing = LogSpace.ln(channel.outgoing)
            logEngaged = LogSpace.ln(channel.outgoing + channel.engagedBonus)
            logIncoming = LogSpace.ln(channel.incoming)
            logUnspecified = LogSpace.ln(channel.unspecified)
            logGroup = LogSpace.ln(channel.group)
            isLatest = channel.aggregation == .latest
        }

        /// `ln w` of one donation; `-∞` when the channel ignores it.
        @inline(__always)
        func logWeight(_ direction: InteractionDirection, engaged: Bool, isGroup: Bool) -> Double {
            let logWeight: Double
            switch direction {
            case .outgoing: logWeight = engaged ? logEngaged : logOutgoing
            case .incoming: logWeight = logIncoming
            case .unspecified: logWeight = logUnspecified
            }
            return isGroup ? logWeight + logGroup : logWeight
        }

        /// The least `ln w` any donation adds, whatever its direction and conversation; `-∞` when the channel
        /// ignores some donations. A conversation's key is at least this plus `λ·t` of its latest donation.
        var smallestLogWeight: Double {
            min(logOutgoing, logEngaged, logIncoming, logUnspecified) + min(0, logGroup)
        }
    }

    /// A policy, checked: every value must let the threshold walk stay exact and every score stay a number.
    /// - Parameters:
    ///   - channels: 1 to `maximumChannels` channels; each with a half-life of 1 to 1e12 seconds and weights from
    ///     0 to 1e30 (0 leaves the channel, or a direction of it, out).
    ///   - contentWeight: `γ`, from 0 to 1e30; 0 turns content-aware ranking off.
    ///   - contentHalfLife: 1 to 1e12 seconds, for the content sums (30 days by default).
    ///   - peopleWeight: `π`, from 0 to 1e30; 0 turns the people term off.
    ///   - groupFactor: `g`, from 0 to 1e30; 1 for no preference.
    ///   - lessFactor: `ℓ`, from 0 to 1 (the walk's bound assumes feedback only lowers a score): each "suggest
    ///     less" multiplies the score by it.
    /// - Throws: `PolicyError` naming the first value out of range.
    public init(
        channels: [Channel], contentWeight: Double = 0, contentHalfLife: Double = 30 * 86_400,
        peopleWeight: Double = 0, groupFactor: Double = 1, lessFactor: Double = 0.25
    ) throws(PolicyError) {
        self.init(
            unchecked: channels, contentWeight: contentWeight, contentHalfLife: contentHalfLife,
            peopleWeight: peopleWeight, groupFactor: groupFactor, lessFactor: lessFactor)
        if let problem { throw PolicyError(message: problem) }
    }

    /// A policy from constants written in this package (`default`, the eval anchors), which its tests check
    /// with `problem`; a caller's values go through the throwing initializer.
    package init(
        unchecked channels: [Channel], contentWeight: Double = 0, contentHalfLife: Double = 30 * 86_400,
        peopleWeight: Double = 0, groupFactor: Double = 1, lessFactor: Double = 0.25
    ) {
        self.channels = channels
        self.contentWeight = contentWeight
        self.contentHalfLife = contentHalfLife
        self.peopleWeight = peopleWeight
        self.groupFactor = groupFactor
        self.lessFactor = lessFactor
        decay = channels.map(ChannelDecay.init)
    }

    /// The half-lives a policy takes, in seconds: from a second to about 31,700 years. A rate of `ln 2 / 1e-300`
    /// per second turned every key into infinity, and the stores' rows into NaN.
    static let halfLives: ClosedRange<Double> = 1...1e12
    /// The weights and factors a policy takes. A donation's weight is a product of several of them, which must stay
    /// a finite number: at 1e300 it did not. The default's channels are 20 orders of magnitude apart; 1e30 leaves room
    /// for far wider blends.
    static let weights: ClosedRange<Double> = 0...1e30

    /// What makes this policy unusable, or `nil`: the first value out of its range, in words.
    package var problem: String? {
        guard (1...Self.maximumChannels).contains(channels.count) else {
            return "a policy has 1 to \(Self.maximumChannels) channels, not \(channels.count)"
        }
        for channel in channels {
            guard Self.halfLives.contains(channel.halfLife) else {
                return
                    "channel '\(channel.name)': the half-life must be from 1 to 1e12 seconds, not \(channel.halfLife)"
            }
            let weights = [
                ("weight", channel.weight), ("outgoing", channel.outgoing), ("incoming", channel.incoming),
                ("unspecified", channel.unspecified), ("engagedBonus", channel.engagedBonus), ("group", channel.group),
            ]
            for (name, value) in weights where !Self.weights.contains(value) {
                return "channel '\(channel.name)': \(name) must be from 0 to 1e30, not \(value)"
            }
        }
        for (name, value) in [
            ("contentWeight", contentWeight), ("peopleWeight", peopleWeight), ("groupFactor", groupFactor),
        ]
        where !Self.weights.contains(value) {
            return "\(name) must be from 0 to 1e30, not \(value)"
        }
        guard Self.halfLives.contains(contentHalfLife) else {
            return "contentHalfLife must be from 1 to 1e12 seconds, not \(contentHalfLife)"
        }
        guard lessFactor >= 0 && lessFactor <= 1 else {
            return "lessFactor must be from 0 to 1 (feedback only lowers a score), not \(lessFactor)"
        }
        return nil
    }

    /// `λ_c = ln 2 / contentHalfLife`, per second: the rate the content sums decay at.
    public var contentRate: Double { 0.693_147_180_559_945_3 / contentHalfLife }

    /// What a store's derived state depends on: each channel's shape and the content half-life, the version of
    /// how the sorted lists are keyed (`ConversationRecord.key(in:)`), and the version of the rule for a group
    /// (`SendMessageIntent.isGroup`; `groups:people` since it counts the people other than the user, each once, who
    /// are named) and of whom a conversation's people are (`SendMessageIntent.participants`; `senders` since the
    /// sender counts), and how many content kinds a conversation keeps besides the broad ones (`ContentSums.limit`;
    /// `kinds:64`). A store whose state was built under another fingerprint rebuilds it (`DonationStore.maintain`);
    /// the weights of the channels are not in it, since the state does not depend on them.
    public var stateFingerprint: String {
        stateFingerprintForWeights + ";kinds:" + String(ContentSums.limit)
    }

    /// The part of `stateFingerprint` that learned weights depend on (`LearnedPolicy.weightsFingerprint`): all of
    /// it but the bound on a conversation's content kinds, which no weight reads; a change of that bound rebuilds
    /// the conversations and leaves every account's weights as they are.
    ///
    /// Built from `Double.description` and literal names: interpolating the `Aggregation` enum itself would print it
    /// through run-time reflection, which cost every command a third of a millisecond at start.
    public var stateFingerprintForWeights: String {
        var text = ""
        for channel in channels {
            for number in [
                channel.halfLife, channel.outgoing, channel.incoming, channel.unspecified, channel.engagedBonus,
                channel.group,
            ] {
                text += number.description + ":"
            }
            switch channel.aggregation {
            case .sum: text += "sum;"
            case .latest: text += "latest;"
            }
        }
        // "kinds:share": a content kind's lists carry the kind's share in their keys (before, the bare channel key);
        // "groups:people": the rule for a group counts the people other than the user (`SendMessageIntent.isGroup`);
        // "senders": a conversation's people include the senders who are not the user (`participants`).
        return text + "content:" + contentHalfLife.description + ";kinds:share;groups:people;senders"
    }
}

/// Why a ranking policy cannot be used: a value out of its range, named, in one line.
public struct PolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and which value it is.
    public let message: String
    /// The message.
    public var description: String { message }
}
