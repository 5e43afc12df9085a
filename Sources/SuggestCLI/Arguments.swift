/// One option a command accepts.
struct OptionSpec: Sendable {
    /// The option as typed, with its dashes (`--store`).
    var name: String
    /// The value's placeholder in help (`ID`, `DATE`); `nil` for a flag.
    var value: String?
    /// One line for `--help`.
    var help: String
    /// Whether it may be given more than once (each value kept, in order).
    var repeatable: Bool

    /// An option that takes no value.
    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: nil, help: help, repeatable: false)
    }

    /// An option that takes a value, shown in help as `value`.
    static func option(_ name: String, _ value: String, _ help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, value: value, help: help, repeatable: repeatable)
    }
}

/// A command line split into options, flags and positional arguments, checked against the command's options.
///
/// The command line builds it; a program that runs `suggest serve` itself (`CommandIO.serve`) receives it and reads
/// the options from it, as the commands do.
public struct ParsedArguments {
    /// The subcommand's name (`serve`), for messages.
    public let command: String
    /// The arguments as given, after the command name.
    public let arguments: [String]
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    /// The arguments that are not options or their values, in order (`-` alone among them).
    public private(set) var positionals: [String] = []

    /// Parses `arguments` (after the command name). `--name value` and `--name=value` are both accepted; `--`
    /// ends the options; `-` alone is a positional (standard input).
    /// - Throws: `CommandError.usage` for an unknown option, a missing value, or a repeated single option.
    init(command: String, arguments: [String], options: [OptionSpec]) throws(CommandError) {
        self.command = command
        self.arguments = arguments
        var specs: [String: OptionSpec] = [:]
        for spec in options { specs[spec.name] = spec }
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard !optionsEnded, argument.hasPrefix("-"), argument != "-" else {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let spec = specs[name] else {
                throw CommandError.usage(
                    "unknown option \(name.prefix(60)) for 'suggest \(command)'; see 'suggest \(command) --help'")
            }
            if spec.value == nil {
                guard inlineValue == nil else { throw CommandError.usage("\(name) takes no value") }
                flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    throw CommandError.usage("\(name) needs a value (\(spec.value ?? "VALUE"))")
                }
                value = arguments[index]
                // `--conversation --json` forgot the value: taking `--json` for it recorded a conversation named
                // so. A value that is one of the command's options is only taken when written `--name=value`.
                let nextName = value.firstIndex(of: "=").map { String(value[..<$0]) } ?? value
                guard specs[nextName] == nil else {
                    let placeholder = spec.value ?? "VALUE"
                    // A number is never an option's name: the `=` form is worth saying only for names.
                    let numeric = ["N", "SECONDS"].contains(placeholder)
                    throw CommandError.usage(
                        "\(name) needs a value (\(placeholder)) before \(nextName)"
                            + (numeric ? "" : "; to give a value that is an option's name, write \(name)=\(value.prefix(60))"))
                }
                index += 1
            }
            if !spec.repeatable, values[name] != nil {
                throw CommandError.usage("\(name) may be given only once")
            }
            values[name, default: []].append(value)
        }
    }

    /// Whether the flag `name` (`--json`) was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of the option `name` (`--store`), or `nil` when it is not given.
    public func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable option, in command-line order; empty when it is not given.
    public func values(_ name: String) -> [String] { values[name] ?? [] }

    /// An option's value as a whole number in `range`, written in the grammar every numeric option shares
    /// (`ValueParsing.wholeNumber`).
    /// - Returns: `nil` when the option is not given.
    /// - Throws: `CommandError.usage` naming the option and the range.
    public func wholeNumber(_ name: String, in range: ClosedRange<Int>) throws(CommandError) -> Int? {
        guard let text = value(name) else { return nil }
        return try ValueParsing.wholeNumber(text, option: name, in: range)
    }

    /// Refuses positional arguments beyond `count`.
    /// - Throws: `CommandError.usage` naming the first argument too many.
    public func expectPositionals(atMost count: Int) throws(CommandError) {
        guard positionals.count <= count else {
            throw CommandError.usage(
                "unexpected argument '\(positionals[count].prefix(60))' for 'suggest \(command)'; "
                    + "see 'suggest \(command) --help'")
        }
    }
}
