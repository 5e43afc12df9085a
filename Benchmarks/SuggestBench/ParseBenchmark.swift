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
        print("## parse: \(path), \(Format.count(lines)) lines, \(failures) rejected, \(mismatches) read differently")
        print("")
        print("| measure | per line | lines/s |")
        print("|---|---|---|")
        print(
            "| Interaction(jsonBytes:), direct | \(Format.duration(directNanoseconds / Double(max(lines, 1)))) | "
                + "\(Format.count(Int(Double(lines) / (directNanoseconds / 1e9)))) |")
        print(
            "| JSONParser.parse(bytes:) | \(Format.duration(jsonNanoseconds / Double(max(lines, 1)))) | "
                + "\(Format.count(Int(Double(lines) / (jsonNanoseconds / 1e9)))) |")
        print(
            "| Interaction(json:) | \(Format.duration(modelNanoseconds / Double(max(lines, 1)))) | "
                + "\(Format.count(Int(Double(lines) / (modelNanoseconds / 1e9)))) |")
        print("| tree: both | \(Format.duration(perLine)) | \(Format.count(Int(1e9 / perLine))) |")
        print("")
        print("checksum \(checksum.hex)")
        return failures == 0 && mismatches == 0 ? 0 : 1
    }

    /// Calls `body` with each line's bytes (without the newline) until it returns false or the file ends.
    static func forEachLine(_ path: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw BenchArguments.UsageError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var filled = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return -1 }
                return read(descriptor, base + filled, raw.count - filled)
            }
            if count < 0 { throw BenchArguments.UsageError("cannot read \(path)") }
            filled += count
            var start = 0
            let keepGoing = try buffer.withUnsafeBufferPointer { all -> Bool in
                var offset = 0
                while offset < filled {
                    if all[offset] == 10 {
                        if offset > start, try !body(UnsafeBufferPointer(rebasing: all[start..<offset])) {
                            return false
                        }
                        start = offset + 1
                    }
                    offset += 1
                }
                return true
            }
            if !keepGoing { return }
            if count == 0 {
                if filled > start {
                    _ = try buffer.withUnsafeBufferPointer {
                        try body(UnsafeBufferPointer(rebasing: $0[start..<filled]))
                    }
                }
                return
            }
            buffer.replaceSubrange(0..<filled - start, with: buffer[start..<filled])
            filled -= start
            if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
        }
    }
}
