/// The arguments of one `suggest-bench` subcommand: `--name value` options, `--flag`s and positionals.
///
/// Plain parsing on purpose: the benchmarks depend on nothing outside the package.
struct BenchArguments {
    /// What went wrong with the command line; printed with the subcommand's usage, exit code 64.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private(set) var options: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []
    /// Everything after a bare `--`, untouched (the `time` subcommand's command line).
    private(set) var rest: [String] = []

    /// Splits `arguments`, given which names are flags (no value) and which are options (one value).
    init(_ arguments: [String], flags knownFlags: Set<String>, options knownOptions: Set<String>) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                rest = Array(arguments[index...])
                break
            }
            if knownFlags.contains(argument) {
                flags.insert(argument)
            } else if knownOptions.contains(argument) {
                guard index < arguments.count else { throw UsageError("\(argument) needs a value") }
                options[argument] = arguments[index]
                index += 1
            } else if argument.hasPrefix("-") && argument.count > 1 {
                throw UsageError("unknown option \(argument)")
            } else {
                positionals.append(argument)
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func string(_ name: String) -> String? { options[name] }

    /// An integer option; `_` separators and k/M suffixes are allowed (`10M`, `100k`, `1_000`).
    func integer(_ name: String, default value: Int, range: ClosedRange<Int> = 0...Int.max) throws(UsageError) -> Int {
        guard let text = options[name] else { return value }
        guard let parsed = BenchArguments.parseCount(text), range.contains(parsed) else {
            throw UsageError("\(name): expected a whole number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return parsed
    }

    func double(_ name: String, default value: Double, range: ClosedRange<Double>) throws(UsageError) -> Double {
        guard let text = options[name] else { return value }
        guard let parsed = Double(text), range.contains(parsed) else {
            throw UsageError("\(name): expected a number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return parsed
    }

    /// `12`, `1_000`, `100k`, `10M`.
    static func parseCount(_ text: String) -> Int? {
        var digits = text.filter { $0 != "_" }
        var scale = 1
        if let last = digits.last, "kKmM".contains(last) {
            scale = last == "k" || last == "K" ? 1_000 : 1_000_000
            digits.removeLast()
        }
        guard let value = Int(digits), value >= 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: scale)
        return overflow ? nil : product
    }
}
