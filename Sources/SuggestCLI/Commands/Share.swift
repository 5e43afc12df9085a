import SuggestCore
import SuggestShare

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
            .option("--identifier", "ID", "The sent donation's identifier: sending again with it records nothing more."),
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
        (docs/share-flow.md has the whole shape) and prints the contract's result object. The server's share body
        works as it is: its "rule", "conversationIdentifier" or "pick", "action", "identifier", and "limit", "at",
        "people", "service", "exclude", "explain" take the place of --extension, --conversation or --pick, --send or
        --cancel, --identifier, and the ranking flags (the request and the flags may not both give one).

        Examples:
          suggest share --extension SampleData/extensions/telegram.plist --attachment public.url=https://example.com
          suggest share --attachment public.jpeg=photo.jpg --person u-juan --pick 1 --send
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        guard !(arguments.flag("--send") && arguments.flag("--cancel")) else {
            throw CommandError.usage("--send and --cancel end the request in opposite ways; give one")
        }
        guard arguments.value("--conversation") == nil || arguments.value("--pick") == nil else {
            throw CommandError.usage("choose with --conversation ID or --pick N, not both")
        }
        let readsJSON = arguments.flag("--json")
        // A usage error, known before anything is read: what --send would send to is not on the command line (nor,
        // perhaps, in a request read as JSON, which is checked once read).
        guard readsJSON || !arguments.flag("--send") || arguments.value("--conversation") != nil
            || arguments.value("--pick") != nil
        else {
            throw CommandError.usage("--send needs the chosen conversation: give --conversation ID or --pick N")
        }
        if readsJSON, !arguments.values("--attachment").isEmpty || arguments.value("--text") != nil {
            throw CommandError.usage("--attachment and --text cannot be combined with --json; put them in the request")
        }
        if readsJSON, let path = arguments.value("--extension"), FileOutput.isStandardInput(path) {
            throw CommandError.usage(
                "--extension \(path) and --json both read standard input; give the Info.plist as a file")
        }
        if arguments.value("--extension")?.isEmpty == true {
            throw CommandError.usage("--extension names no file; give the share extension's Info.plist")
        }
        var target: ShareTarget
        do {
            target = try arguments.value("--extension").map { path throws(ShareTargetError) in
                try ShareTarget.load(infoPlistAt: path)
            } ?? .acceptingAnything
        } catch {
            throw CommandError.usage(error.description)
        }
        var choice: ShareFlow.Choice
        if let pick = try arguments.wholeNumber("--pick", in: 1...List.maximumLimit) {
            choice = .rank(pick)
        } else if let conversation = arguments.value("--conversation") {
            // Held to a donation's rules, as the server's body is: an empty one read as an unknown conversation.
            choice = .conversation(try StoreOptions.name(conversation, option: "--conversation"))
        } else {
            choice = .none
        }
        var action: ShareFlow.Action = arguments.flag("--send") ? .send : arguments.flag("--cancel") ? .cancel : .preview
        var identifier = try arguments.value("--identifier").map { try StoreOptions.name($0, option: "--identifier") }
        let request: ShareRequest
        var bodyRanking: ShareFlow.Request.Ranking?
        if readsJSON {
            let bytes = try io.standardInput.readAll(
                what: "a share request JSON object (docs/share-flow.md)", atMost: ShareRequest.maximumJSONBytes)
            // Not decoded with replacements: a byte 0xFF was then reported as the 0xEF of U+FFFD.
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CommandError.usage("standard input is not UTF-8 text; a share request is a JSON object")
            }
            let whole = try ShareFlow.Request(jsonText: text)
            request = whole.items
            // The server's share body works here too: what it says and the flags may not both say.
            if whole.givesRule {
                guard arguments.value("--extension") == nil else {
                    throw CommandError.usage("the request's rule and --extension both give the target; give one")
                }
                target = whole.target
            }
            if whole.choice != .none {
                guard choice == .none else {
                    throw CommandError.usage(
                        "the request chooses the conversation and so do --conversation or --pick; give one")
                }
                choice = whole.choice
            }
            if whole.givesAction {
                guard !arguments.flag("--send") && !arguments.flag("--cancel") else {
                    throw CommandError.usage("the request's action and --send or --cancel both end it; give one")
                }
                action = whole.action
            }
            // The ranking members too (`service`, `exclude`, ...): ignored, a body's "send" went to a conversation
            // its service or exclusion would have left out.
            let flags = ["limit": "--limit", "at": "--at", "people": "--person", "service": "--service",
                "exclude": "--exclude", "explain": "--explain"]
            for member in whole.ranking.given {
                guard let flag = flags[member], arguments.values(flag).isEmpty && !arguments.flag(flag) else {
                    throw CommandError.usage(
                        "the request's \(member) and \(flags[member] ?? member) both give it; give one")
                }
            }
            if let given = whole.identifier {
                guard identifier == nil else {
                    throw CommandError.usage("the request's identifier and --identifier both give it; give one")
                }
                identifier = given
            }
            bodyRanking = whole.ranking
            if action == .send && choice == .none {
                throw CommandError.usage(
                    "sending needs the chosen conversation: give conversationIdentifier or pick in the request, or "
                        + "--conversation ID or --pick N")
            }
        } else {
            request = try ShareRequest(
                attachmentArguments: arguments.values("--attachment"), contentText: arguments.value("--text"))
        }
        let account = try StoreOptions.account(arguments)
        var context = try List.rankingContext(arguments)
        if let bodyRanking {
            context = bodyRanking.applied(to: context)
            do {
                try context.validate(naming: ShareFlow.Request.Ranking.fieldNames)
            } catch {
                throw CommandError.usage(error.description)
            }
        }
        let store = try StoreOptions.open(
            arguments, io, maintaining: account, creating: false, reading: action != .send)
        let explain = arguments.flag("--explain") || bodyRanking?.explain == true
        let result = try ShareFlow(target: target).run(
            request, choice: choice, action: action, account: account, context: context, in: store, explain: explain,
            identifier: identifier)
        if readsJSON || arguments.flag("--json-output") {
            try io.out(result.jsonText + "\n")
        } else {
            try io.out(text(result, at: context.at))
        }
        if let failure = result.failure {
            io.err("suggest share: \(failure)\n")
            return result.failureIsTheRequests ? ExitCode.usage : ExitCode.failure
        }
        return ExitCode.success
    }

    /// The result for people: everything that came from the request, the rule or the store escaped for a terminal.
    static func text(_ result: ShareResult, at: Timestamp) -> String {
        let escaped = TerminalText.escaped
        guard result.activated else {
            let reason = escaped(result.reason ?? "its activation rule refused them")
            return "The target does not apply to these items: \(reason).\n"
        }
        var text = "Suggestions for this share"
        if !result.contentTypes.isEmpty { text += " (" + escaped(result.contentTypes.joined(separator: ", ")) + ")" }
        text += ":\n" + SuggestionOutput.table(result.suggestions, at: at, learned: result.learnedWeights)
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
        case .sent(let identifier) where result.preselected != nil && result.reason != nil:
            // A retried send: its donation was recorded by the send before.
            text += "Sent before: donation \(escaped(identifier)) was recorded then; nothing was recorded now.\n"
        case .sent(let identifier): text += "Sent: recorded donation \(escaped(identifier)) as an engaged suggestion.\n"
        case .cancelled: text += "Cancelled: nothing was recorded.\n"
        case .preview:
            // Not after a send that failed: its error says what to do, and the hint read as if nothing was asked.
            if result.preselected != nil && result.failure == nil {
                text += "Preview only: --send completes the share, --cancel cancels it.\n"
            }
        }
        return text
    }
}
