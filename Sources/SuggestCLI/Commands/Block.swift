import SuggestCore

/// `suggest block`: never suggest a conversation.
enum Block: Command {
    static let name = "block"
    static let summary = "Never suggest a conversation, whatever is donated later ('suggest unblock' undoes it)."
    static let usage = "--conversation ID [OPTIONS]\n       suggest block --list"
    static let options: [OptionSpec] =
        StoreOptions.all + [
            .option("--conversation", "ID", "The conversation never to suggest."),
            .flag("--list", "List the blocked conversations of the account."),
        ]

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let account = try StoreOptions.account(arguments)
        if arguments.flag("--list") {
            // Not silently ignored: `block --list --conversation X` reads as a question about X.
            if arguments.value("--conversation") != nil {
                throw CommandError.usage("--list lists every blocked conversation; leave out --conversation")
            }
            let store = try StoreOptions.open(arguments, io, maintaining: account, creating: false, reading: true)
            let blocked = try store.blockedConversations(account: account)
            // Said on standard error, so that a script still reads an empty list: a silent command read as broken.
            if blocked.isEmpty { io.err("no conversation of account \(TerminalText.escaped(account)) is blocked") }
            // One per line: an identifier with a line break in it must not read as two.
            for id in blocked { try io.out(TerminalText.escaped(id) + "\n") }
            return ExitCode.success
        }
        let conversation = try requiredConversation(arguments, command: name)
        // A block may come before any donation: it outlives them anyway.
        try StoreOptions.open(arguments, io, maintaining: account, creating: true)
            .setBlocked(true, conversation: conversation, account: account)
        try io.out("blocked \(TerminalText.escaped(conversation)): it will not be suggested\n")
        return ExitCode.success
    }

    static func requiredConversation(_ arguments: ParsedArguments, command: String) throws(CommandError) -> String {
        guard let conversation = arguments.value("--conversation"), !conversation.isEmpty else {
            throw CommandError.usage("--conversation ID is required; see 'suggest \(command) --help'")
        }
        return try StoreOptions.name(conversation, option: "--conversation")
    }
}

/// `suggest unblock`: suggest a blocked conversation again.
enum Unblock: Command {
    static let name = "unblock"
    static let summary = "Allow a blocked conversation to be suggested again."
    static let usage = "--conversation ID [OPTIONS]"
    static let options: [OptionSpec] =
        StoreOptions.all + [.option("--conversation", "ID", "The conversation to allow again.")]

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let account = try StoreOptions.account(arguments)
        let conversation = try Block.requiredConversation(arguments, command: name)
        let store = try StoreOptions.open(arguments, io, maintaining: account, creating: false)
        // Byte for byte, as the store keys names: "café" composed is not "café" decomposed (a block of one, lifted
        // by the other's name, said "unblocked" and left the block in place).
        let wasBlocked = try store.blockedConversations(account: account).contains {
            $0.utf8.elementsEqual(conversation.utf8)
        }
        try store.setBlocked(false, conversation: conversation, account: account)
        try io.out(
            wasBlocked
                ? "unblocked \(TerminalText.escaped(conversation))\n"
                : "\(TerminalText.escaped(conversation)) was not blocked; nothing changed ('suggest block --list' "
                    + "lists the blocked conversations)\n")
        if let unnoted = StoreOptions.unnotedCleanup(of: store, after: "unblocked") { throw unnoted }
        return ExitCode.success
    }
}
