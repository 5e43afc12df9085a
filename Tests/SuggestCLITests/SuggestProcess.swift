import SuggestTestSupport

/// Runs the built `suggest` binary as a separate process, as a user or a script would: the shared `Suggest.run`,
/// with text in and text out and a scratch directory (also the child's HOME) of its own for each run.
enum SuggestProcess {
    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// Runs `suggest ARGUMENTS` with `input` on standard input and the given extra environment.
    static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:]) -> Result {
        do {
            let scratch = try TemporaryDirectory("cli-test")
            let outcome = try Suggest.run(
                arguments, input: Array(input.utf8), scratch: scratch.path, environment: environment)
            // A signal shows as 128 + its number, as a shell shows it.
            return Result(
                status: outcome.status ?? 128 + (outcome.signal ?? 0), standardOutput: outcome.output,
                standardError: outcome.error)
        } catch {
            return Result(status: -1, standardOutput: "", standardError: "\(error)")
        }
    }

    static func write(_ text: String, to path: String) { try? writeFile(path, text) }
}
