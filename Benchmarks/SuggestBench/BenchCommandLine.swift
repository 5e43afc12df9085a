/// The subcommands of `suggest-bench` and their dispatch.
enum BenchCommandLine {
    struct Subcommand: Sendable {
        let name: String
        let summary: String
        let usage: String
        let run: @Sendable ([String]) throws -> Int32
    }

    static let subcommands: [Subcommand] = [
        Subcommand(
            name: "generate", summary: "Write a seeded synthetic donation history as JSON Lines.",
            usage: GenerateCommand.usage, run: GenerateCommand.run),
        Subcommand(
            name: "apply", summary: "Time InMemoryRankingIndex.apply per donation, interning and settling.",
            usage: ApplyBenchmark.usage, run: ApplyBenchmark.run),
        Subcommand(
            name: "learn", summary: "Time what LearnedWeights.record adds to applying a donation.",
            usage: LearnBenchmark.usage, run: LearnBenchmark.run),
        Subcommand(
            name: "learner-grid", summary: "Replay files under a grid of the learner's two constants, beside the anchors.",
            usage: LearnerGrid.usage, run: LearnerGrid.run),
        Subcommand(
            name: "topk", summary: "Time the exact top 8 (threshold algorithm) against brute force.",
            usage: TopKBenchmark.usage, run: TopKBenchmark.run),
        Subcommand(
            name: "store", summary: "Build a store via importDonations; time open, suggestions, donate in-process.",
            usage: StoreBenchmark.usage, run: StoreBenchmark.run),
        Subcommand(
            name: "parse", summary: "Time the JSON half of 'suggest import' on a JSON Lines file.",
            usage: ParseBenchmark.usage, run: ParseBenchmark.run),
        Subcommand(
            name: "standin", summary: "Write a stand-in history: a heavy e-mailer's company, or an SMS log.",
            usage: StandInCommand.usage, run: StandInCommand.run),
        Subcommand(
            name: "replay", summary: "Time 'suggest eval' under each policy against 'suggest import' of the same file.",
            usage: ReplayBenchmark.usage, run: ReplayBenchmark.run),
        Subcommand(
            name: "time", summary: "Time whole processes (wall, cpu, peak RSS), optionally A against B in turn.",
            usage: ProcessTimer.usage, run: ProcessTimer.run),
    ]

    static let help = """
        usage: suggest-bench SUBCOMMAND [OPTIONS]

        Benchmarks of suggest's ranker and store, and a synthetic history generator. Results go to standard
        output, progress to standard error. Build with: swift build -c release --product suggest-bench

        subcommands:
        \(subcommands.map { "  " + $0.name.padding(10) + $0.summary }.joined(separator: "\n"))

        'suggest-bench SUBCOMMAND --help' shows a subcommand's options.
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
            print(help)
            return arguments.isEmpty ? 64 : 0
        }
        guard let subcommand = subcommands.first(where: { $0.name == name }) else {
            Log.note("suggest-bench: unknown subcommand '\(name)'; see 'suggest-bench --help'")
            return 64
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(subcommand.usage)
            return 0
        }
        do {
            return try subcommand.run(rest)
        } catch let error as BenchArguments.UsageError {
            Log.note("suggest-bench \(name): \(error); see 'suggest-bench \(name) --help'")
            return 64
        } catch {
            Log.note("suggest-bench \(name): \(error)")
            return 1
        }
    }
}

extension String {
    /// The string padded with spaces to `width` characters.
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}
