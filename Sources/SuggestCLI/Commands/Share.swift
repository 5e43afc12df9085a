import SuggestCore
import SuggestShare
import SuggestSQLiteStore

/// `suggest share`: the share flow, from the shared items to the preselected recipient and back to a donation.
enum Share: Command {
    static let name = "share"
    static let summary = "Run the share flow: does the target apply, which suggestions, which recipient, send or cancel."
    static let usage =
        "[--extension PLIST] (--attachment UTI=VALUE ... | --json < request.json) [--conversation ID | --pick N] [--send | --cancel]"
    static let options: [OptionSpec] =
        StoreOptions.all
        + [
            .option("--extension", "PLIST", "The share extension's Info.plist (XML or binary); without it, a target that accepts anything."),
            .option("--attachment", "UTI=VALUE", "An attachment of the shared item (public.url=https://example.com).", repeatable: true),
            .option("--text", "TEXT", "The shared item's text (contentText)."),
            .flag("--json", "Read the whole share request from standard input and print the result as JSON."),
            .flag("--json-output", "Print the result as JSON (the request still comes from the flags)."),
            .option("--conversation", "ID", "The conversation identifier of the intent the extension received (a picked suggestion)."),
            .option("--pick", "N", "Pick the suggestion at rank N of this list."),
            .flag("--send", "Complete the request: donate the share as an outgoing, engaged donation."),
            .flag("--cancel", "Cancel the request: nothing is recorded."),
        ]
        + List.rankingOptions.filter { $0.name != "--json" && $0.name != "--content-type" }
    static let discussion = """
        The extension's NSExtensionActivationRule decides whether the target applies to the shared items (both the
        dictionary form and predicate strings). If it applies, the suggestions are ranked for this content: the
        attachments' types raise conversations that received such content, --person raises conversations with
        someone in it. The chosen conversation is checked: if it was deleted, blocked or never donated, the result
        says so and preselects nothing (never another conversation), and the list is the fallback.

        --json reads a request such as
          {"items": [{"contentText": "look", "attachments": [{"type": "public.url", "value": "https://example.com"}]}]}
        (docs/share-flow.md has the whole shape) and prints the contract's result object.

        Examples:
          suggest share --extension SampleData/extensions/telegram.plist --attachment public.url=https://example.com
          suggest share --attachment public.jpeg=photo.jpg --person u-juan --pick 1 --send
        """

    /// The share's result, as the contract's `suggest share --json` prints it.
    struct Outcome {
        var activated: Bool
        var suggestions: [Suggestion]
        var preselected: Suggestion?
        var reason: String?
        var outcome: String
        var contentTypes: [String]
        var donation: String?
    }

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        guard !(arguments.flag("--send") && arguments.flag("--cancel")) else {
            throw CommandError.usage("--send and --cancel end the request in opposite ways; give one")
        }
        guard arguments.value("--conversation") == nil || arguments.value("--pick") == nil else {
            throw CommandError.usage("choose with --conversation ID or --pick N, not both")
        }
        // A usage error, known before anything is read: what --send would send to is not on the command line.
        guard !arguments.flag("--send") || arguments.value("--conversation") != nil || arguments.value("--pick") != nil
        else {
            throw CommandError.usage("--send needs the chosen conversation: give --conversation ID or --pick N")
        }
        let readsJSON = arguments.flag("--json")
        if readsJSON, !arguments.values("--attachment").isEmpty || arguments.value("--text") != nil {
            throw CommandError.usage("--attachment and --text cannot be combined with --json; put them in the request")
        }
        let target: ShareTarget
        do {
            target = try arguments.value("--extension").map { path throws(ShareTargetError) in
                try ShareTarget.load(infoPlistAt: path)
            } ?? .acceptingAnything
        } catch {
            throw CommandError.usage(error.description)
        }
        let request =
            readsJSON
            ? try ShareRequest(
                jsonText: String(
                    decoding: try io.standardInput.readAll(what: "a share request JSON object (docs/share-flow.md)"),
                    as: UTF8.self))
            : try ShareRequest(attachmentArguments: arguments.values("--attachment"), contentText: arguments.value("--text"))
        let pick = try arguments.wholeNumber("--pick", in: 1...List.maximumLimit)
        let account = try StoreOptions.account(arguments)
        let context = try List.rankingContext(arguments, extraContentTypes: request.contentTypes)
        let decision = target.evaluate(request)
        // A rule's refusal can quote the rule, and a rule can be megabytes long: the reason is one readable line.
        var result = Outcome(
            activated: decision.activated, suggestions: [], preselected: nil,
            reason: decision.reason.map { TerminalText.capped($0, Self.maximumReasonLength) },
            outcome: arguments.flag("--cancel") ? "cancelled" : "preview", contentTypes: request.contentTypes,
            donation: nil)
        var failure: String?
        if decision.activated {
            let store = try StoreOptions.open(arguments, io, creating: false)
            result.suggestions = try store.suggestions(account: account, context: context, explain: arguments.flag("--explain"))
            try choose(arguments, pick: pick, target: target, store: store, account: account, context: context, into: &result)
            if arguments.flag("--send") {
                if let chosen = result.preselected {
                    result.donation = try send(to: chosen, request: request, account: account, at: context.at, store: store)
                    result.outcome = "sent"
                } else {
                    failure = "nothing was sent: " + (result.reason ?? "the chosen conversation cannot be suggested")
                }
            }
        } else if arguments.flag("--send") {
            failure = "nothing was sent: the target does not apply to these items"
        }
        if readsJSON || arguments.flag("--json-output") {
            try io.out(json(result, explain: arguments.flag("--explain")) + "\n")
        } else {
            try io.out(text(result, at: context.at, explain: arguments.flag("--explain")))
        }
        if let failure {
            io.err("suggest share: \(failure)\n")
            return ExitCode.failure
        }
        return ExitCode.success
    }

    /// The longest refusal reason shown, in characters.
    static let maximumReasonLength = 500

    /// Resolves the chosen conversation and checks that it may be preselected; otherwise says why.
    static func choose(
        _ arguments: ParsedArguments, pick: Int?, target: ShareTarget, store: DonationStore, account: String,
        context: RankingContext, into result: inout Outcome
    ) throws {
        if let pick {
            guard let picked = result.suggestions.first(where: { $0.rank == pick }) else {
                result.reason = "there is no suggestion at rank \(pick) (the list has \(result.suggestions.count)); pick from the list"
                return
            }
            result.preselected = picked
            return
        }
        guard let conversation = arguments.value("--conversation") else { return }
        guard target.supportsSendMessageIntent else {
            result.reason = "the extension does not list INSendMessageIntent in IntentsSupported, so it never receives a "
                + "suggestion's intent; showing the list"
            return
        }
        if context.excluded.contains(conversation) {
            result.reason = "conversation \(conversation) is excluded here; pick from the list"
            return
        }
        switch try store.conversationStatus(account: account, conversationIdentifier: conversation, at: context.at) {
        case .available(let suggestion):
            result.preselected = suggestion
        case .blocked:
            result.reason = "conversation \(conversation) is blocked ('suggest unblock' allows it); pick from the list"
        case .unknown:
            result.reason = "conversation \(conversation) is not in account \(account): it was deleted, expired or never "
                + "donated; pick from the list"
        }
    }

    /// Completes the request: one outgoing donation to the chosen conversation, with the shared content types,
    /// marked as an engaged suggestion, and the conversation's latest names and people.
    static func send(to chosen: Suggestion, request: ShareRequest, account: String, at: Timestamp, store: DonationStore)
        throws -> String?
    {
        let interaction = Interaction(
            account: account, date: at, direction: .outgoing,
            intent: SendMessageIntent(
                conversationIdentifier: chosen.conversationIdentifier, speakableGroupName: chosen.speakableGroupName,
                serviceName: chosen.serviceName, recipients: chosen.recipients, image: chosen.conversationImage,
                contentTypes: request.contentTypes),
            isEngagedSuggestion: true)
        switch try store.donate(interaction, now: .now()) {
        case .recorded(let identifier): return identifier
        case .duplicate, .expired: return nil
        }
    }

    static func json(_ result: Outcome, explain: Bool) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("activated")
        writer.bool(result.activated)
        writer.key("suggestions")
        writer.beginArray()
        for suggestion in result.suggestions { SuggestionOutput.write(suggestion, explain: explain, to: &writer) }
        writer.endArray()
        writer.key("preselected")
        if let chosen = result.preselected {
            writer.beginObject()
            SuggestionOutput.writeConversation(chosen, to: &writer)
            writer.endObject()
        } else {
            writer.null()
        }
        writer.key("reason")
        if let reason = result.reason { writer.string(reason) } else { writer.null() }
        writer.key("outcome")
        writer.string(result.outcome)
        writer.key("contentTypes")
        writer.beginArray()
        for type in result.contentTypes { writer.string(type) }
        writer.endArray()
        if let donation = result.donation {
            writer.key("donation")
            writer.string(donation)
        }
        writer.endObject()
        return writer.text
    }

    /// The result for people: everything that came from the request, the rule or the store escaped for a terminal.
    static func text(_ result: Outcome, at: Timestamp, explain: Bool) -> String {
        let escaped = TerminalText.escaped
        guard result.activated else {
            let reason = escaped(result.reason ?? "its activation rule refused them")
            return "The target does not apply to these items: \(reason).\n"
        }
        var text = "Suggestions for this share"
        if !result.contentTypes.isEmpty { text += " (" + escaped(result.contentTypes.joined(separator: ", ")) + ")" }
        text += ":\n" + SuggestionOutput.table(result.suggestions, explain: explain, at: at)
        if let chosen = result.preselected {
            text += "\nPreselected: \(SuggestionOutput.title(chosen)) "
                + SuggestionOutput.identifier(chosen.conversationIdentifier)
            let people = chosen.recipients.map { $0.displayName ?? $0.customIdentifier ?? "?" }
            if !people.isEmpty { text += "\n  recipients: " + escaped(people.joined(separator: ", ")) }
            if let image = chosen.image { text += "\n  image: \(escaped(image))" }
            text += "\n"
        } else if let reason = result.reason {
            text += "\nNothing preselected: \(escaped(reason)).\n"
        }
        switch result.outcome {
        case "sent": text += "Sent: recorded donation \(escaped(result.donation ?? "?")) as an engaged suggestion.\n"
        case "cancelled": text += "Cancelled: nothing was recorded.\n"
        default: if result.preselected != nil { text += "Preview only: --send completes the share, --cancel cancels it.\n" }
        }
        return text
    }
}
