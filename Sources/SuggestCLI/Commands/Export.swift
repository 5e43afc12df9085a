import SuggestCore

/// `suggest export`: the account's donations as JSON Lines that `import` reads back.
enum Export: Command {
    static let name = "export"
    static let summary = "Write the account's stored donations as JSON Lines that 'suggest import' reads back."
    static let usage = "[OPTIONS] > donations.jsonl"
    static let options: [OptionSpec] = StoreOptions.all
    static let discussion = """
        Donations come out in the order they were recorded, with their identifiers, so exporting, importing into
        an empty store and exporting again gives the same bytes. Message text is never stored, so never exported.
        """

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let account = try StoreOptions.account(arguments)
        let store = try StoreOptions.open(arguments, io, maintaining: account, creating: false, reading: true)
        try store.forEachDonation(account: account) { interaction in try io.out(interaction.jsonLine + "\n") }
        return ExitCode.success
    }
}
