import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore
import Synchronization

/// One subcommand of `suggest`: its name, help and options, and what it does.
protocol Command: Sendable {
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The usage line(s) after `suggest NAME`.
    static var usage: String { get }
    /// More help after the options, examples first.
    static var discussion: String { get }
    static var options: [OptionSpec] { get }
    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32
}

extension Command {
    static var discussion: String { "" }

    /// The full `--help` text.
    static var help: String {
        var text = "\(summary)\n\nUsage: suggest \(name) \(usage)\n\nOptions:\n"
        let all = options + [.flag("--help", "Show this help.")]
        let width = all.map { option in option.name.count + (option.value.map { $0.count + 1 } ?? 0) }.max() ?? 0
        for option in all {
            let label = option.name + (option.value.map { " " + $0 } ?? "")
            text += "  " + label + String(repeating: " ", count: width - label.count + 2) + option.help
            if option.repeatable { text += " (repeatable)" }
            text += "\n"
        }
        if !discussion.isEmpty { text += "\n" + discussion + (discussion.hasSuffix("\n") ? "" : "\n") }
        return text
    }
}

/// `paragraph` broken into lines of at most `width` characters, at spaces: help built from values (the policy's
/// channels) cannot be wrapped by hand.
func wrapped(_ paragraph: String, width: Int = 110) -> String {
    var lines: [String] = []
    var line = ""
    for word in paragraph.split(separator: " ") {
        if !line.isEmpty && line.count + 1 + word.count > width {
            lines.append(line)
            line = ""
        }
        line += (line.isEmpty ? "" : " ") + word
    }
    if !line.isEmpty { lines.append(line) }
    return lines.joined(separator: "\n")
}
