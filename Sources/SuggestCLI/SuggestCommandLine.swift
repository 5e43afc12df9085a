import SuggestCore
import SuggestSQLiteStore

/// The `suggest` command line: finds the subcommand, handles `--help` and `--version`, and turns every error into
/// one line on standard error and the contract's exit code.
public enum SuggestCommandLine {
    static let commands: [any Command.Type] = [
        Donate.self, Import.self, Export.self, List.self, Share.self, Delete.self, Block.self, Unblock.self,
        Feedback.self, Config.self, Eval.self, Convert.self, Serve.self, Demo.self,
    ]

    static var help: String {
        var text = """
            suggest ranks the conversations a person is most likely to share to, from donations of the messages
            they send and receive.

            Usage: suggest COMMAND [OPTIONS]

            Commands:

            """
        let width = commands.map { $0.name.count }.max() ?? 0
        for command in commands {
            text += "  " + command.name + String(repeating: " ", count: width - command.name.count + 2)
                + command.summary + "\n"
        }
        text += """

            Options:
              --help     Show this help; 'suggest COMMAND --help' shows a command's.
              --version  Show the version.

            The store is a directory: --store DIR, else $SUGGEST_STORE, else $XDG_DATA_HOME/suggest, else
            ~/.local/share/suggest. Commands that record (donate, import, block, feedback --less, config with a
            setting) create it, and only its own directory; the others say "no such store" where there is none.
            --store redis://HOST:PORT[,HOST:PORT...] (or $SUGGEST_STORE) uses a Redis Cluster instead
            (docs/redis.md: passwords, durability, failover).
            Exit codes: 0 success, 1 failure (a store that cannot be opened, output that cannot be written),
            64 bad usage or invalid input.

            """
        return text
    }

    /// Runs a command line as the process received it, as bytes, and returns the exit code.
    ///
    /// An argument that is not valid UTF-8 is refused (exit 64), as an invalid donation is: `CommandLine.arguments`
    /// would repair it into U+FFFD, so that two different byte strings (`a\xFFb` and `a\xFEb`) became one
    /// identifier. An environment variable that is not UTF-8 is refused by the command that would use it to find
    /// the store (a repaired path is another directory); `--store` or `--version` need none.
    /// - Parameters:
    ///   - rawArguments: the arguments after the program name, as bytes.
    ///   - rawEnvironment: the variables of `CommandIO.environmentVariables` that are set, as `NAME=VALUE` bytes;
    ///     they replace `io.environment`.
    public static func run(rawArguments: [[UInt8]], rawEnvironment: [[UInt8]], io: CommandIO) -> Int32 {
        var arguments: [String] = []
        for (index, bytes) in rawArguments.enumerated() {
            guard let argument = validUTF8(bytes) else {
                let command = arguments.first.flatMap { first in commands.first(where: { $0.name == first }) }
                io.err(
                    (command.map { "suggest \($0.name)" } ?? "suggest")
                        + ": argument \(index + 1) ('\(shown(bytes))') is not valid UTF-8; give identifiers, names and "
                        + "paths as UTF-8 text")
                return ExitCode.usage
            }
            arguments.append(argument)
        }
        var io = io
        io.environment = [:]
        io.unreadableVariables = [:]
        for entry in rawEnvironment {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: entry[..<equals], as: UTF8.self)
            let bytes = Array(entry[(equals + 1)...])
            if let value = validUTF8(bytes) {
                io.environment[name] = value
            } else {
                // Kept (repaired) so that the store's location is resolved as it would be, then refused there.
                io.environment[name] = String(decoding: bytes, as: UTF8.self)
                io.unreadableVariables[name] = shown(bytes)
            }
        }
        return run(arguments, io: io)
    }

    /// The text `bytes` spell, or `nil` when they are not UTF-8 (`UTF8Validation`, not `String(validating:as:)`,
    /// whose generic look-ups every start would pay for).
    static func validUTF8(_ bytes: [UInt8]) -> String? {
        UTF8Validation.firstInvalidOffset(in: bytes) == nil ? String(decoding: bytes, as: UTF8.self) : nil
    }

    /// Bytes as a person can read them in an error: printable ASCII as it is, anything else as `\xFF`; 60 at most.
    static func shown(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes.prefix(60) {
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return bytes.count > 60 ? text + "…" : text
    }

    /// Runs one command line and returns the exit code.
    ///
    /// A result that cannot be written (a full disk, a closed standard output) fails the command with exit 1, at the
    /// first write that fails or at the final flush; a closed pipe (`suggest export | head -1`) ends it at once and
    /// quietly.
    /// - Parameter arguments: the arguments after the program name.
    public static func run(_ arguments: [String], io: CommandIO) -> Int32 {
        var code = dispatch(arguments, io: io)
        do {
            try io.standardOutput.flush()
        } catch {
            // A failure already reported (or a command that failed anyway) keeps its own exit code.
            if code == ExitCode.success {
                code = report(error, arguments: arguments, io: io, afterRunning: true)
            }
        }
        try? io.standardError.flush()
        return code
    }

    /// Finds the command and runs it, every error turned into its line and exit code.
    private static func dispatch(_ arguments: [String], io: CommandIO) -> Int32 {
        guard let first = arguments.first else {
            io.err("suggest: no command given; see 'suggest --help'\n")
            return ExitCode.usage
        }
        let command = commands.first(where: { $0.name == first })
        do {
            if first == "--help" || first == "-h" || first == "help" {
                if first == "help", arguments.count > 1,
                    let command = commands.first(where: { $0.name == arguments[1] })
                {
                    try io.out(command.help)
                } else {
                    try io.out(help)
                }
                return ExitCode.success
            }
            if first == "--version" {
                try io.out("suggest \(Release.version)\n")
                return ExitCode.success
            }
            guard let command else {
                io.err(oneLine("suggest: unknown command '\(first.prefix(60))'; see 'suggest --help' for the commands"))
                return ExitCode.usage
            }
            let rest = Array(arguments.dropFirst())
            if rest.contains("--help") || rest.contains("-h") {
                try io.out(command.help)
                return ExitCode.success
            }
            let parsed = try ParsedArguments(command: command.name, arguments: rest, options: command.options)
            return try command.run(parsed, io)
        } catch let error as OutputError {
            return report(error, arguments: arguments, io: io)
        } catch let error as CommandError {
            io.err(oneLine("suggest \(first): \(error)"))
            return error.exitCode
        } catch let error as InputError {
            io.err(oneLine("suggest \(first): invalid input: \(error)"))
            return ExitCode.usage
        } catch let error as StoreError {
            io.err(oneLine("suggest \(first): \(error.message)" + remedy(for: error)))
            return ExitCode.failure
        } catch is CancellationError {
            io.err(oneLine("suggest \(first): interrupted; nothing was changed"))
            return ExitCode.failure
        } catch {
            io.err(oneLine("suggest \(first): \(error)"))
            return ExitCode.failure
        }
    }

    /// What the command line adds to a store's error: the flag that chooses another store.
    static func remedy(for error: StoreError) -> String {
        switch error.kind {
        case .notAStore, .foreignDatabase, .notADirectory: return "; move it away or choose another --store"
        case .readOnly: return " (or use another --store)"
        // Only where there is no store yet: a store deleted from under the command says what to do itself.
        case .noSuchStore where error.message.hasPrefix("no such store"):
            return " ('suggest donate' or 'suggest import') or check --store"
        default: return ""
        }
    }

    /// Says that standard output failed and returns the failure's exit code (1): a result that could not be
    /// written. A command that may have changed the store says that what it changed stays changed, which a script
    /// that would run it again (a `donate` without an identifier, a `share --send`) needs to know, also when the
    /// reader went away (`suggest donate ... | true`); `afterRunning`: the command had run to its end. A reader that
    /// went away from a command that changes nothing asked for no more (`suggest export | head -1`): nothing is
    /// said.
    private static func report(_ error: OutputError, arguments: [String], io: CommandIO, afterRunning: Bool = false)
        -> Int32
    {
        let command = commands.first(where: { $0.name == arguments.first })?.name
        let changing = mayChangeTheStore(arguments)
        guard !error.isBrokenPipe || changing else { return ExitCode.failure }
        var line = (command.map { "suggest \($0)" } ?? "suggest") + ": \(error)"
        if changing {
            line +=
                afterRunning
                ? "; the command ran to its end: what it changed in the store, if anything, stays changed"
                : "; what the command changed in the store before this, if anything, stays changed"
        }
        io.err(oneLine(line))
        return ExitCode.failure
    }

    /// Whether the command line may change a store: `share` only with `--send`, `config` only with a setting,
    /// `block` but for `--list`.
    static func mayChangeTheStore(_ arguments: [String]) -> Bool {
        switch arguments.first {
        case "donate", "import", "delete", "unblock", "feedback": return true
        case "block": return !arguments.contains("--list")
        case "config": return arguments.contains("--max-age-days") || arguments.contains("--idle-days")
        case "share": return arguments.contains("--send")
        default: return false
        }
    }

    /// An error is one line on standard error, even when it quotes input with line breaks or escape sequences in
    /// it (`TerminalText.line`).
    static func oneLine(_ message: String) -> String { TerminalText.line(message) }
}
