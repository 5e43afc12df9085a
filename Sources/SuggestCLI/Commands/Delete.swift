import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore

/// `suggest delete`: removes donations and everything derived from them, from the ranking and from the disk.
enum Delete: Command {
    static let name = "delete"
    static let summary = "Delete donations: a conversation, an identifier, a group, everything before a date, or all."
    static let usage =
        "--conversation ID | --identifier ID | --group-identifier ID | --before DATE | --all | --everything [OPTIONS]"
    static let options: [OptionSpec] =
        StoreOptions.all + [
            .option("--conversation", "ID", "Every donation of this conversation, and its names, people and pictures."),
            .option("--identifier", "ID", "The donation with this identifier."),
            .option("--group-identifier", "ID", "Every donation with this group identifier."),
            .option("--before", "DATE", "Every donation dated before this moment."),
            .flag("--all", "Every donation of the account."),
            .flag("--everything", "Wipe the whole store: every account, every preference."),
            .flag("--json", "Print the report as JSON."),
        ]
    static let discussion = """
        What is deleted is gone at once: the ranking is recomputed from what remains (exactly as if the deleted
        donations had never been recorded), a conversation left with no donation loses its names, people and
        pictures, and SQLite overwrites the freed pages and truncates its write-ahead log, so the deleted text is
        in no file of the store. A block ('suggest block') outlives deletion; 'suggest unblock' lifts it, and then
        its name leaves the files too.
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        // `StoreOptions.name` refuses an empty identifier: it names nothing, and "nothing to delete" would read as
        // done to a script that lost a variable.
        var selectors: [DeletionSelector] = []
        for (option, selector) in [
            ("--conversation", DeletionSelector.conversation), ("--identifier", DeletionSelector.identifier),
            ("--group-identifier", DeletionSelector.groupIdentifier),
        ] {
            if let id = arguments.value(option) { selectors.append(selector(try StoreOptions.name(id, option: option))) }
        }
        if let text = arguments.value("--before") { selectors.append(.before(try ValueParsing.date(text, option: "--before"))) }
        if arguments.flag("--all") { selectors.append(.all) }
        let everything = arguments.flag("--everything")
        guard selectors.count + (everything ? 1 : 0) == 1 else {
            throw CommandError.usage(
                "say what to delete with exactly one of --conversation, --identifier, --group-identifier, --before, "
                    + "--all or --everything")
        }
        if everything, arguments.value("--account") != nil {
            throw CommandError.usage("--everything wipes every account; leave out --account (or use --all for one account)")
        }
        let account = try StoreOptions.account(arguments)
        let store = try StoreOptions.open(arguments, io, maintaining: everything ? nil : account, creating: false)
        let report = try everything ? store.deleteEverything() : store.delete(selectors[0], account: account)
        // A debt no other process can learn of is settled here, or said as this command's failure.
        let ownsItsDebt = (store as? SQLiteDonationStore)?.cleanupLeftUnnoted != nil
        let unnoted = StoreOptions.unnotedCleanup(of: store, after: "deleted")
        if !report.logTruncated && !ownsItsDebt {
            let reason =
                store is RedisDonationStore
                ? "not every Redis node could rewrite its append-only file and snapshot now (a node busy or down), "
                    + "so the deleted bytes leave them at the store's next upkeep"
                : "deleted bytes may stay in the store's files for now (another process was reading its "
                    + "write-ahead log, or the file could not be rewritten: a full disk?); the next command that opens "
                    + "the store, or a running server's next checkpoint, removes them"
            io.err("suggest delete: deleted; \(reason) (run any suggest command later)\n")
        }
        if arguments.flag("--json") {
            try io.out(report.jsonText(account: everything ? nil : account) + "\n")
        } else if everything {
            try io.out("wiped the store: \(counted(report.donations, "donation")) deleted\n")
        } else if report.donations == 0 && report.preferencesForgotten {
            try io.out(
                "no donation to delete in account \(TerminalText.escaped(account)); its \"suggest less\" feedback is "
                    + "forgotten\n")
        } else if report.donations == 0 {
            try io.out("nothing to delete in account \(TerminalText.escaped(account))\n")
        } else {
            var text = "deleted \(counted(report.donations, "donation")) from "
            text += counted(report.conversations.count, "conversation")
            text += ": " + named(report.conversations) + "\n"
            if !report.removedConversations.isEmpty {
                text += "removed entirely (no donation left): " + named(report.removedConversations) + "\n"
            }
            if report.preferencesForgotten { text += "\"suggest less\" of conversations without donations is forgotten too\n" }
            try io.out(text)
        }
        if let unnoted { throw unnoted }
        return ExitCode.success
    }

    /// How many conversations the text report names before it only counts the rest: a `--before` or `--all` can
    /// touch tens of thousands, which no one reads on one line.
    static let namedConversations = 10

    /// The first identifiers, escaped for a terminal, and how many more there are (`--json` gives them all).
    static func named(_ identifiers: [String]) -> String {
        let shown = identifiers.prefix(namedConversations).map(TerminalText.escaped).joined(separator: ", ")
        guard identifiers.count > namedConversations else { return shown }
        return shown + " and \(identifiers.count - namedConversations) more (--json lists them all)"
    }
}
