import SuggestCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `suggest-bench parse FILE`: the JSON half of `suggest import` and `suggest eval`: every line through
/// `Interaction(jsonBytes:)` (what they call: the direct decoder), and through the tree path it falls back to
/// (`JSONParser.parse(bytes:)`, then `Interaction(json:)`), with no store. The two results must be equal.
enum ParseBenchmark {
    static let usage = """
        usage: suggest-bench parse FILE [--lines N]

        Reads FILE (donation JSON Lines) in 1 MiB chunks and reads each line as 'suggest import' does
        (Interaction(jsonBytes:), straight from the bytes), then again through the JSON tree
        (JSONParser.parse(bytes:), then Interaction(json:)), up to N lines (default all). Reports lines per
        second for each; exits with 1 if the two readings of a line differ.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(arguments, flags: [], options: ["--lines"])
        guard parsed.positionals.count == 1 else { throw BenchArguments.UsageError("give one FILE") }
        let limit = try parsed.integer("--lines", default: Int.max, range: 1...Int.max)
        let path = parsed.positionals[0]
        var jsonNanoseconds = 0.0
        var modelNanoseconds = 0.0
        var directNanoseconds = 0.0
        var lines = 0
        var failures = 0
        var mismatches = 0
        var checksum = Checksum()
        try forEachLine(path) { bytes in
            guard lines < limit else { return false }
            lines += 1
            let direct = MonotonicClock.time { try? Interaction(jsonBytes: bytes) }
            directNanoseconds += direct.nanoseconds
            let json = MonotonicClock.time { try? JSONParser.parse(bytes: bytes) }
            jsonNanoseconds += json.nanoseconds
            guard let value = json.result else {
                failures += 1
                return true
            }
            let model = MonotonicClock.time { try? Interaction(json: value) }
            modelNanoseconds += model.nanoseconds
            if let interaction = model.result { checksum.add(interaction.date.seconds) } else { failures += 1 }
            if direct.result != model.result { mismatches += 1 }
            return true
        }
        let perLine = (jsonNanoseconds + modelNanoseconds) / Double(max(lines, 1))
        // Lines per second, 0 when nothing was timed (an empty file): a rate of 0/0 cannot become an Int.
        func rate(_ nanoseconds: Double) -> String {
            nanoseconds > 0 ? Format.count(Int(Double(lines) / (nanoseconds / 1e9))) : "0"
        }
        print("## parse: \(path), \(Format.count(lines)) lines, \(failures) rejected, \(mismatches) read differently")
        print("")
        print("| measure | per line | lines/s |")
        print("|---|---|---|")
        print(
            "| Interaction(jsonBytes:), direct | \(Format.duration(directNanoseconds / Double(max(lines, 1)))) | "
                + "\(rate(directNanoseconds)) |")
        print(
            "| JSONParser.parse(bytes:) | \(Format.duration(jsonNanoseconds / Double(max(lines, 1)))) | "
                + "\(rate(jsonNanoseconds)) |")
        print(
            "| Interaction(json:) | \(Format.duration(modelNanoseconds / Double(max(lines, 1)))) | "
                + "\(rate(modelNanoseconds)) |")
        print("| tree: both | \(Format.duration(perLine)) | \(rate(jsonNanoseconds + modelNanoseconds)) |")
        print("")
        print("checksum \(checksum.hex)")
        return failures == 0 && mismatches == 0 ? 0 : 1
    }

    /// Calls `body` with each non-empty line's bytes (without the newline, a `\r` before it kept) until it returns
    /// false or the file ends.
    static func forEachLine(_ path: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        let lines: LineStream
        do {
            lines = try LineStream(path: path, carriageReturns: .keep)
        } catch {
            throw BenchArguments.UsageError("cannot read \(path): \(error.reason)")
        }
        while true {
            let line: UnsafeBufferPointer<UInt8>?
            do {
                line = try lines.nextLine()
            } catch {
                throw BenchArguments.UsageError("cannot read \(path)")
            }
            guard let line else { return }
            if line.isEmpty { continue }
            guard try body(line) else { return }
        }
    }
}
