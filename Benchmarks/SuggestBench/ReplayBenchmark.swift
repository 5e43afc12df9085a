import SuggestCore
import SuggestEval

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `suggest-bench replay`: what replaying a history costs against recording it, as whole processes in the same
/// run: `suggest import` into a new store and `suggest eval` under each policy, in turn, R times.
enum ReplayBenchmark {
    static let usage = """
        usage: suggest-bench replay FILE [--policies all|NAME,...] [--depth N] [--runs R] [--suggest PATH] [--store DIR]
               suggest-bench replay FILE --walks [--policies ...] [--depth N]

        Times, as whole processes, in turn and R times (default 3):
          import         'suggest import --quiet FILE' into a new store at DIR (default /tmp/suggest-bench-replay;
                         removed before each run; retention turned off first, untimed, so every donation is kept)
          eval NAME      'suggest eval FILE --policy NAME --depth N' for each policy (default all; depth 100)
        and prints one Markdown row per command: wall median (min–max), CPU, peak RSS, and the ratio of each eval to
        the import of the same run (median, min–max). The goal for one account of 1M donations over 100k
        conversations (suggest-bench generate --donations 1M --conversations 100k --zipf 1.1) is at most 2.

        --walks replays in this process instead, the policies ranked by TopKRanker only (fixed, default, tdlib,
        firefox), and prints how many sorted and random accesses each exact rank took.
        --suggest names the suggest executable (default: the one beside suggest-bench).
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(
            arguments, flags: ["--walks"], options: ["--policies", "--depth", "--runs", "--suggest", "--store"])
        guard parsed.positionals.count == 1, let file = parsed.positionals.first else {
            throw BenchArguments.UsageError("give one FILE of donation JSON Lines")
        }
        let depth = try parsed.integer("--depth", default: EvalResult.defaultDepth, range: 20...Int.max)
        let names = parsed.string("--policies") ?? "all"
        let policies: [RankingPolicy]
        if names == "all" {
            policies = RankingPolicy.all
        } else {
            var named: [RankingPolicy] = []
            for name in names.split(separator: ",") {
                if name == "default-3" {
                    // The learned default without its engaged channel: what the fourth channel costs.
                    let base = LearnedPolicy.default.base
                    let three = try FrecencyPolicy(
                        channels: Array(base.channels.prefix(3)), contentWeight: base.contentWeight,
                        contentHalfLife: base.contentHalfLife, peopleWeight: base.peopleWeight,
                        groupFactor: base.groupFactor, lessFactor: base.lessFactor)
                    named.append(.learned(try LearnedPolicy(base: three), name: "default-3"))
                    continue
                }
                do {
                    named.append(try RankingPolicy.named(String(name)))
                } catch {
                    throw BenchArguments.UsageError(error.description)
                }
            }
            policies = named
        }
        if parsed.flag("--walks") {
            return try ReplayWalks.run(file, policies: policies, depth: depth)
        }
        let runs = try parsed.integer("--runs", default: 3, range: 1...100)
        let suggest = try ProcessTimer.resolve(parsed.string("--suggest") ?? besideThisExecutable("suggest"))
        let store = parsed.string("--store") ?? "/tmp/suggest-bench-replay"

        var imports: [ProcessTimer.Run] = []
        var evals: [[ProcessTimer.Run]] = Array(repeating: [], count: policies.count)
        var failures = 0
        for run in 1...runs {
            _ = try ProcessTimer.spawn("/bin/rm", ["rm", "-rf", store])
            let configured = try ProcessTimer.spawn(
                suggest, ["suggest", "config", "--store", store, "--max-age-days", "0", "--idle-days", "0"])
            if configured.status != 0 { failures += 1 }
            let imported = try ProcessTimer.spawn(suggest, ["suggest", "import", "--store", store, "--quiet", file])
            if imported.status != 0 { failures += 1 }
            imports.append(imported)
            Log.note("replay: run \(run)/\(runs): import \(Format.fixed(imported.wall, 2)) s")
            for (position, policy) in policies.enumerated() {
                let evaluated = try ProcessTimer.spawn(
                    suggest, ["suggest", "eval", file, "--policy", policy.name, "--depth", String(depth)])
                if evaluated.status != 0 { failures += 1 }
                evals[position].append(evaluated)
                Log.note("replay: run \(run)/\(runs): eval \(policy.name) \(Format.fixed(evaluated.wall, 2)) s")
            }
        }
        _ = try ProcessTimer.spawn("/bin/rm", ["rm", "-rf", store])
        print("## replay against import: \(file), depth \(depth), \(runs) runs in turn, median (min–max)")
        print("")
        print("| command | wall | cpu | peak RSS | wall / import of the same run |")
        print("|---|---|---|---|---|")
        print(row("import", imports, ratios: nil))
        for (position, policy) in policies.enumerated() {
            let ratios = zip(evals[position], imports).map { $0.wall / $1.wall }
            print(row("eval \(policy.name)", evals[position], ratios: ratios))
        }
        if failures > 0 { Log.note("replay: \(failures) command(s) exited non-zero; run them by hand to see why") }
        return failures == 0 ? 0 : 1
    }

    static func row(_ label: String, _ runs: [ProcessTimer.Run], ratios: [Double]?) -> String {
        let seconds = { (value: Double) in Format.fixed(value, 2) + " s" }
        let wall = Summary(runs.map(\.wall)).formatted(seconds)
        let cpu = seconds(Summary(runs.map(\.cpu)).median)
        let peak = Format.megabytes(Summary(runs.map(\.peakBytes)).median)
        let ratio = ratios.map { Summary($0).formatted { Format.fixed($0, 2) } } ?? "-"
        return "| \(label) | \(wall) | \(cpu) | \(peak) | \(ratio) |"
    }

    /// The path of `name` in the directory this executable was started from.
    static func besideThisExecutable(_ name: String) -> String {
        let path = CommandLine.arguments.first ?? name
        guard let slash = path.lastIndex(of: "/") else { return name }
        return String(path[...slash]) + name
    }
}
