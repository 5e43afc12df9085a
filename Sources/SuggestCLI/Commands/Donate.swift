import SuggestCore

/// `suggest donate`: records one donation after a message is sent or received.
enum Donate: Command {
    static let name = "donate"
    static let summary = "Record one donation: a message sent to or received from a conversation."
    static let usage = "--conversation ID [--direction outgoing|incoming] [OPTIONS]\n       suggest donate --json < donation.json"
    static let options: [OptionSpec] =
        StoreOptions.all + [
            .flag("--json", "Read one donation JSON object from standard input (see docs/donation-format.md)."),
            .option("--conversation", "ID", "The conversation identifier (required without --json)."),
            .option("--direction", "DIR", "outgoing, incoming or unspecified (default: outgoing)."),
            .option("--date", "DATE", "When: RFC 3339 with a zone or Unix seconds (default: now)."),
            .option("--identifier", "ID", "The donation's identifier; donating it again is a no-op (default: generated)."),
            .option("--group-identifier", "ID", "Groups donations for 'suggest delete --group-identifier'."),
            .option("--group-name", "NAME", "The conversation's speakable group name."),
            .option(
                "--recipient", "ID[=NAME]", "A recipient's custom identifier and display name.", repeatable: true),
            .option("--sender", "ID[=NAME]", "The sender, for an incoming message."),
            .option("--service", "NAME", "The service name (for example sms or chat.example)."),
            .option("--image", "REF", "A reference to the conversation's picture (path, URL or asset name)."),
            .option("--content-type", "UTI", "The type of what was sent (public.jpeg).", repeatable: true),
        ]
    static let discussion = """
        Examples:
          suggest donate --conversation thread-42 --group-name "Climbing crew" --recipient u-17="Juan Chavez"
          echo '{"date":"2026-11-29T18:03:00Z","direction":"outgoing","intent":{"conversationIdentifier":"u-17"}}' \\
            | suggest donate --json

        Prints the recorded identifier, or says that the identifier was already there (nothing changed).
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let interaction = try arguments.flag("--json") ? fromJSON(arguments, io) : fromFlags(arguments)
        let store = try StoreOptions.open(arguments, io, maintaining: interaction.account, creating: true)
        let now = Timestamp.now()
        switch try store.record(interaction, now: now) {
        case .recorded(let identifier): try io.out("recorded \(TerminalText.escaped(identifier))\n")
        case .duplicate(let identifier):
            try io.out("already recorded \(TerminalText.escaped(identifier)); nothing changed\n")
        case .expired:
            let days = try store.retention().maximumAgeDays
            try io.out(
                "not recorded: \(interaction.date.rfc3339) is older than the store keeps donations "
                    + "(\(Config.keptSpan(days: days, now: now)); see 'suggest config')\n")
        }
        return ExitCode.success
    }

    static func fromJSON(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Interaction {
        let flagOptions = [
            "--conversation", "--direction", "--date", "--identifier", "--group-identifier", "--group-name",
            "--recipient", "--sender", "--service", "--image", "--content-type",
        ]
        if let given = flagOptions.first(where: { !arguments.values($0).isEmpty }) {
            throw CommandError.usage("\(given) cannot be combined with --json; put it in the JSON object")
        }
        let bytes = try io.standardInput.readAll(what: "one donation JSON object (docs/donation-format.md)")
        let account = try StoreOptions.account(arguments)
        let decoded = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(InputError) in try Interaction(jsonBytes: buffer, defaultAccount: account) }
        }
        if case .failure(var error) = decoded, error.message.contains("unexpected text after the JSON value") {
            // Two lines of JSON Lines, most likely: say where those go.
            error.message += "; --json reads one donation: for several (JSON Lines) use 'suggest import -'"
            throw error
        }
        let interaction = try decoded.get()
        // Byte for byte, as the store compares accounts (`!=` takes canonically equivalent spellings for one).
        if arguments.value("--account") != nil, !interaction.account.hasSameBytes(as: account) {
            throw CommandError.usage(
                "the donation's account '\(interaction.account.prefix(60))' differs from --account \(account); "
                    + "give one of the two, or the same account in both")
        }
        return interaction
    }

    static func fromFlags(_ arguments: ParsedArguments) throws -> Interaction {
        guard let given = arguments.value("--conversation") else {
            throw CommandError.usage("--conversation ID is required (or give the whole donation with --json)")
        }
        // Named by the option, as `delete` names it, not as a JSON field the person never wrote.
        let conversation = try StoreOptions.name(given, option: "--conversation")
        let contentTypes = try arguments.values("--content-type").map { text throws(CommandError) in
            try StoreOptions.name(text, option: "--content-type")
        }
        var direction = InteractionDirection.outgoing
        if let text = arguments.value("--direction") {
            guard let parsed = InteractionDirection(rawValue: text) else {
                throw CommandError.usage("--direction: unknown direction '\(text.prefix(40))'; use outgoing, incoming or unspecified")
            }
            direction = parsed
        }
        let date = try arguments.value("--date").map { text throws(CommandError) in try ValueParsing.date(text, option: "--date") } ?? .now()
        let intent = SendMessageIntent(
            conversationIdentifier: conversation, speakableGroupName: arguments.value("--group-name"),
            serviceName: arguments.value("--service"),
            sender: try arguments.value("--sender").map { text throws(CommandError) in try person(text, option: "--sender") },
            recipients: try arguments.values("--recipient").map { text throws(CommandError) in
                try person(text, option: "--recipient")
            },
            image: arguments.value("--image"),
            contentTypes: contentTypes)
        // Flags go through the same validation as JSON: one set of rules for every way in.
        return try Interaction(
            account: try StoreOptions.account(arguments), identifier: arguments.value("--identifier"),
            groupIdentifier: arguments.value("--group-identifier"), date: date, direction: direction, intent: intent
        ).validated()
    }

    /// `ID=Display Name` or `ID` (`ID=` has no name: an empty one is none).
    /// An empty identifier is refused: `=Juan` named a person by nothing, and was stored so.
    static func person(_ text: String, option: String) throws(CommandError) -> Person {
        let equals = text.firstIndex(of: "=")
        let identifier = String(text[..<(equals ?? text.endIndex)])
        guard !identifier.isEmpty else {
            throw CommandError.usage("\(option) '\(text.prefix(60))' has no identifier; write ID or ID=NAME")
        }
        return Person(
            customIdentifier: identifier, displayName: equals.map { String(text[text.index(after: $0)...]) })
    }
}
