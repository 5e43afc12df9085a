import SuggestCore

/// The share flow, from the shared items to the preselected recipient and back to a donation: what a share
/// extension does when the person taps Share, and what `suggest share` and the server's share route run.
///
/// 1. The target's activation rule decides whether it applies to the shared items; when it does not, nothing else
///    happens and the result says which part of the rule refused them. A target that does not declare
///    `INSendMessageIntent` in `IntentsSupported` applies, but gets no suggestions: it never receives their intent.
/// 2. The suggestions are ranked for this content: the items' types lift conversations that received such content.
/// 3. The chosen conversation (the intent the extension received, or a rank of the list) is checked: deleted,
///    blocked, excluded, idle, unknown conversations, and those of another service than the one asked for, are
///    never preselected, and never swapped for another one; the
///    result says why, and the list is the fallback.
/// 4. Sending records one outgoing donation to it, with the shared types, marked as an engaged suggestion, dated
///    when it is sent (whatever moment the suggestions were ranked for); cancelling records nothing.
public struct ShareFlow: Sendable {
    /// The share extension the items are shared to: its activation rule, types and supported intents.
    public var target: ShareTarget

    /// A flow for `target`; without one, for a target that accepts anything.
    public init(target: ShareTarget = .acceptingAnything) { self.target = target }

    /// Which conversation the person chose.
    public enum Choice: Sendable, Equatable {
        /// None yet: the share sheet is showing the suggestions.
        case none
        /// The conversation identifier of the intent the extension received (a picked suggestion).
        case conversation(String)
        /// The suggestion at this rank of the list (1 = first).
        case rank(Int)
    }

    /// How the request ends.
    public enum Action: String, Sendable, Equatable, CaseIterable {
        /// Show the suggestions and the preselected conversation; record nothing.
        case preview
        /// Complete the share: record one outgoing donation to the preselected conversation.
        case send
        /// The person dismissed the sheet: record nothing.
        case cancel
    }

    /// Runs the flow against a store.
    ///
    /// A request the rule refuses is not an error: the result says so (and, for `send`, has a `failure`). Neither is
    /// a choice that cannot be preselected: the result gives the reason and the list.
    /// - Parameters:
    ///   - request: what is shared.
    ///   - choice: the conversation the person chose, if any.
    ///   - action: preview, send or cancel.
    ///   - account: whose history ranks and receives the donation.
    ///   - context: the ranking context without the shared types (they are added from `request`, as many distinct
    ///     ones as `RankingContext.Limits.contentTypes` allows); its `at` is the moment the suggestions are ranked
    ///     for.
    ///   - now: the moment a sent share is recorded at.
    ///   - store: the history to rank and to record the share in.
    ///   - explain: attach each score's parts to the suggestions.
    ///   - identifier: the sent donation's identifier, for a send that may be retried: a second send with the same
    ///     one records nothing more and answers as the first did (`sent`, with this identifier). Without one, the
    ///     store makes one up, and every send records.
    /// - Returns: what happened, as the contract's `share` result.
    /// - Throws: `InputError` for a context over its limits, or an item's `userInfo` nested deeper than a property
    ///   list may be; `StoreError`.
    public func run(
        _ request: ShareRequest, choice: Choice, action: Action, account: String, context: RankingContext,
        in store: some DonationStore, now: Timestamp = .now(), explain: Bool = false, identifier: String? = nil
    ) throws -> ShareResult {
        var context = context
        let sharedTypes = typesForTheStore(request.contentTypes, storeTypes: store.types)
        // The shared types join the context up to the distinct types a query takes: a share of files of forty
        // kinds is still a share, ranked by the first kinds it names, though the whole list is too many for a query.
        var given = Set(context.contentTypes.map { ByteKey($0.lowercased()) })
        context.contentTypes += sharedTypes.filter { type in
            given.count < RankingContext.Limits.contentTypes && given.insert(ByteKey(type.lowercased())).inserted
        }
        // The caller's input, refused as such: the target's rule would only say it does not apply.
        if let problem = request.nestingProblem { throw InputError(field: "userInfo", message: problem) }
        let decision = target.evaluate(request)
        if decision.exceededBudget { throw InputError(field: "rule", message: decision.reason ?? "too costly") }
        // A rule's refusal can quote the rule, and a rule can be megabytes long: the reason stays readable.
        var result = ShareResult(
            activated: decision.activated, suggestions: [], preselected: nil,
            reason: decision.reason.map { Self.capped($0) },
            outcome: action == .cancel ? .cancelled : .preview, contentTypes: request.contentTypes, failure: nil)
        guard decision.activated else {
            if action == .send { result.failure = "nothing was sent: the target does not apply to these items" }
            return result
        }
        // The share sheet offers conversation suggestions only to extensions that declare the intent, and only
        // those receive a picked suggestion's intent: for any other, no list, and nothing to pick from it.
        guard target.supportsSendMessageIntent else {
            result.reason = Self.withoutSuggestionsReason
            if action == .send { result.failure = "nothing was sent: " + Self.withoutSuggestionsReason }
            return result
        }
        let list = try store.suggestions(account: account, context: context, explain: explain)
        result.suggestions = list.suggestions
        result.learnedWeights = list.learnedWeights
        // A retried send whose answer was lost: its identifier names a donation recorded then. It is answered as the
        // first send was, whatever the list or the conversation's state is now: a pick named another rank once the
        // send moved its conversation up, and a block since refused it, though the share was recorded.
        if action == .send, let identifier,
            let earlier = try store.conversation(ofDonation: identifier, account: account)
        {
            let named: String? =
                switch choice {
                case .conversation(let conversation): conversation
                case .rank: earlier
                case .none: nil
                }
            if let named, named.hasSameBytes(as: earlier) {
                try choose(.conversation(earlier), account: account, context: context, store: store, into: &result)
                result.outcome = .sent(identifier: identifier)
                result.wasRecordedBefore = true
                result.reason = Self.recordedBefore(identifier)
                return result
            }
        }
        try choose(choice, account: account, context: context, store: store, into: &result)
        if action == .send {
            if let chosen = result.preselected {
                // Held to the format's rules as any donation built in code: a share of 150 types recorded as it is
                // would put a line in the account's export that its import refuses.
                var donation = donation(to: chosen, types: sharedTypes, account: account, at: now)
                donation.identifier = identifier
                let checked = Result { () throws(InputError) in try donation.validated() }
                if case .failure(let error) = checked, error.field == nil {
                    // Over a donation's size, from what the conversation was last donated with: not the caller's
                    // input, which it was reported as (with advice about group names the caller cannot follow).
                    result.failure = "nothing was sent: the donation it would record, the conversation's name, "
                        + "people and picture with the shared types, is over the "
                        + "\(ByteCount(Interaction.maximumDonationBytes)) a donation may take"
                    return result
                }
                switch try store.recordShare(try checked.get(), now: now) {
                case .recorded(let identifier):
                    result.outcome = .sent(identifier: identifier)
                case .duplicate(let repeated) where identifier != nil:
                    // A retry of a send whose answer was lost: it was recorded then, to this conversation. The same
                    // identifier on a donation to another conversation is not a retry of this send.
                    switch try store.conversation(ofDonation: repeated, account: account) {
                    case let earlier? where earlier.hasSameBytes(as: chosen.conversationIdentifier):
                        result.outcome = .sent(identifier: repeated)
                        result.wasRecordedBefore = true
                        result.reason = Self.recordedBefore(repeated)
                    case .some:
                        // Said in the result too: its JSON read as a preview with no reason.
                        let reason = "identifier \(Self.capped(repeated)) names a donation to another conversation; "
                            + "give this send an identifier of its own"
                        result.reason = reason
                        result.failure = "nothing was sent: " + reason
                        result.failureIsTheRequests = true
                    case nil:
                        result.failure = "nothing was sent: a donation with identifier \(Self.capped(repeated)) was "
                            + "recorded and deleted meanwhile; send again to record it"
                    }
                case .duplicate, .expired:
                    result.failure = "nothing was sent: the store did not record the share"
                case nil:
                    let reason = "conversation \(chosen.conversationIdentifier) was deleted while the share was being "
                        + "sent; pick from the list"
                    result.preselected = nil
                    result.reason = reason
                    result.failure = "nothing was sent: " + reason
                }
            } else {
                result.failure = "nothing was sent: "
                    + (result.reason ?? "no conversation was chosen; choose one by its identifier or by its rank")
            }
        }
        return result
    }

    /// Why a target that does not declare `INSendMessageIntent` gets no suggestions and no preselection.
    static let withoutSuggestionsReason =
        "the extension does not list INSendMessageIntent in IntentsSupported, so the share sheet offers it no "
        + "conversation suggestions and it never receives a picked one's intent"

    /// The longest reason a result gives, in characters.
    static let maximumReasonLength = 500

    static func capped(_ reason: String) -> String {
        guard reason.count > maximumReasonLength else { return reason }
        return String(reason.prefix(maximumReasonLength - 1)) + "…"
    }

    /// Resolves the chosen conversation and checks that it may be preselected; otherwise says why.
    private func choose(
        _ choice: Choice, account: String, context: RankingContext, store: some DonationStore,
        into result: inout ShareResult
    ) throws {
        switch choice {
        case .none:
            return
        case .rank(let rank):
            guard let picked = result.suggestions.first(where: { $0.rank == rank }) else {
                result.reason = "there is no suggestion at rank \(rank) (the list has \(result.suggestions.count)); "
                    + "pick from the list"
                return
            }
            result.preselected = picked
        case .conversation(let conversation):
            if context.excluded.contains(where: { $0.hasSameBytes(as: conversation) }) {
                result.reason = "conversation \(conversation) is excluded here; pick from the list"
                return
            }
            // The context's own idle cutoff, if it has one, decides, as it does for the list.
            switch try store.conversationStatus(
                account: account, conversationIdentifier: conversation, at: context.at,
                notIdleSince: context.notIdleSince)
            {
            case .available(let suggestion):
                // Byte for byte, as the ranking keeps a service's conversations apart.
                if let service = context.serviceName, suggestion.serviceName?.hasSameBytes(as: service) != true {
                    result.reason = "conversation \(conversation) is not one of service \(service), the only ones "
                        + "suggested here; pick from the list"
                } else {
                    result.preselected = suggestion
                }
            case .idle:
                result.reason = "conversation \(conversation) has had no donation for longer than the store's idle "
                    + "limit (its retention's idle days), so it is not suggested; pick from the list"
            case .blocked:
                result.reason = "conversation \(conversation) is blocked (unblocking it allows it); pick from the list"
            case .unknown:
                // Not the account's name: a server's store account is the tenant's, which its clients never see.
                result.reason = "conversation \(conversation) has no donation in this account: it was deleted, expired "
                    + "or never donated; pick from the list"
            }
        }
    }

    /// The donation a sent share records: outgoing, engaged, with the shared types and the conversation's latest
    /// names, people and picture.
    func donation(to chosen: Suggestion, types: [String], account: String, at date: Timestamp) -> Interaction {
        Interaction(
            account: account, date: date, direction: .outgoing,
            intent: SendMessageIntent(
                conversationIdentifier: chosen.conversationIdentifier, speakableGroupName: chosen.speakableGroupName,
                serviceName: chosen.serviceName, recipients: chosen.recipients, image: chosen.conversationImage,
                contentTypes: Self.donatedTypes(types)),
            isEngagedSuggestion: true)
    }

    /// The reason of a send answered by a donation recorded before under its identifier.
    static func recordedBefore(_ identifier: String) -> String {
        "a donation with identifier \(capped(identifier)) was recorded before (a retried send, or the message donated "
            + "already); nothing was recorded now"
    }

    /// The shared types as the store reads them: each, followed by the public kind the target's own declarations
    /// make it when the store's tree, which knows the public types only, does not see that kind. A share of a
    /// `com.example.photo` that the target declares as an image activated it as an image, but ranked as an
    /// unknown type, and its donation gave the conversation no lift for later photos.
    ///
    /// The walks of the target's declarations have a budget of steps the size of the rule evaluation's: a thousand
    /// declared types of 32 parents each take tens of thousands of steps a walk. Past it, the rest go without
    /// their kind.
    func typesForTheStore(_ shared: [String], storeTypes: UniformTypeTree) -> [String] {
        var types: [String] = []
        var steps = 0
        for type in shared {
            types.append(type)
            guard steps < PredicateEvaluator.Budget.steps else { continue }
            let kind =
                UniformTypeTree.contentKinds.first { target.types.conforms(type, to: $0, steps: &steps) }
                ?? type.lowercased()
            if kind != storeTypes.contentKind(of: type) { types.append(kind) }
        }
        return types
    }

    /// The shared types as the sent donation carries them: the first `Interaction.maximumContentTypes` distinct
    /// ones. A share of 150 files of as many types was previewed, then failed at its send with an error about
    /// `intent.contentTypes`, a field its caller never wrote.
    static func donatedTypes(_ types: [String]) -> [String] {
        var seen: Set<ByteKey> = []
        var kept: [String] = []
        for type in types where seen.count < Interaction.maximumContentTypes && seen.insert(ByteKey(type)).inserted {
            kept.append(type)
        }
        return kept
    }
}

/// What the share flow did: the contract's `suggest share --json` result.
public struct ShareResult: Sendable, Equatable {
    /// Whether the target's activation rule accepts the shared items.
    public var activated: Bool
    /// The suggestions for this content (empty when the target does not apply).
    public var suggestions: [Suggestion]
    /// The conversation the chosen intent or rank names, when it exists and may be suggested.
    public var preselected: Suggestion?
    /// Why nothing is preselected, or which part of the rule refused the items.
    public var reason: String?
    /// How the request ended: previewed, sent (with the donation's identifier) or cancelled.
    public var outcome: Outcome
    /// The shared items' types, each once.
    public var contentTypes: [String]
    /// Whether the send's donation was recorded by an earlier request under the same identifier (this one a retry
    /// whose first answer was lost), not by this one: counted as a duplicate, as a repeated donation is.
    public var wasRecordedBefore = false
    /// When the action was to send and nothing was sent: why (the front end reports it as a failure).
    public var failure: String?
    /// Whether that failure is the request's own (an identifier that names a donation to another conversation),
    /// which asking again cannot change: the command line exits 64 for it, 1 for the others.
    public var failureIsTheRequests = false
    /// With `explain` under learned weights, the account's weights the suggestions were ranked with (as `list
    /// --explain` prints them under its table); not part of the contract's JSON.
    public var learnedWeights: LearnedWeightsSummary?

    /// How a share request ended.
    public enum Outcome: Sendable, Equatable {
        /// Nothing recorded yet: the suggestions were shown.
        case preview
        /// One outgoing donation recorded, with this identifier.
        case sent(identifier: String)
        /// Nothing recorded.
        case cancelled

        /// The contract's word for it.
        public var name: String {
            switch self {
            case .preview: return "preview"
            case .sent: return "sent"
            case .cancelled: return "cancelled"
            }
        }
    }
}

extension ShareResult {
    /// Writes the contract's result object, the bytes that `suggest share --json` and the server's share route
    /// both answer with.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("activated")
        writer.bool(activated)
        writer.key("suggestions")
        writer.beginArray()
        for suggestion in suggestions { suggestion.write(to: &writer) }
        writer.endArray()
        writer.key("preselected")
        if let preselected {
            writer.beginObject()
            preselected.writeConversation(to: &writer)
            writer.endObject()
        } else {
            writer.null()
        }
        writer.key("reason")
        if let reason { writer.string(reason) } else { writer.null() }
        writer.key("outcome")
        writer.string(outcome.name)
        writer.key("contentTypes")
        writer.beginArray()
        for type in contentTypes { writer.string(type) }
        writer.endArray()
        if case .sent(let identifier) = outcome {
            writer.key("donation")
            writer.string(identifier)
        }
        writer.endObject()
    }

    /// The contract's result text, without a line break.
    public var jsonText: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }
}
