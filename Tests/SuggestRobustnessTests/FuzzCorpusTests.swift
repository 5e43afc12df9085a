import SuggestCore
import Testing
import SuggestTestSupport

/// The fuzz targets' checks (FuzzHarness, the same files the libFuzzer targets compile) on the committed seed
/// corpus and on every input a fuzzing run turned up (`Fuzz/regressions/`), plus a short seeded mutation run, so
/// that `swift test` catches a regression without libFuzzer.
@Suite struct FuzzCorpusTests {
    /// The files of `Fuzz/<kind>/<target>/`, name and bytes.
    static func inputs(_ target: String, kinds: [String] = ["corpus", "regressions"]) throws -> [(
        name: String, bytes: [UInt8]
    )] {
        var inputs: [(name: String, bytes: [UInt8])] = []
        for kind in kinds {
            let directory = Suggest.packageRoot + "/Fuzz/\(kind)/\(target)"
            for name in directoryEntries(directory) {
                inputs.append(("\(kind)/\(target)/\(name)", try readFile(directory + "/" + name)))
            }
        }
        return inputs
    }

    @Test func donationJSONCorpusAndRegressions() throws {
        let inputs = try Self.inputs("DonationJSON")
        #expect(inputs.count >= 10)
        for input in inputs {
            #expect(DonationJSONHarness.check(input.bytes) == [], "\(input.name)")
        }
    }

    @Test func commandLineCorpusAndRegressions() throws {
        let harness = try CommandLineHarness()
        let inputs = try Self.inputs("CommandLine")
        #expect(inputs.count >= 10)
        for input in inputs {
            #expect(harness.check(input.bytes) == [], "\(input.name)")
        }
    }

    /// Seeded mutations of the donation corpus (bit flips, byte changes, insertions, deletions, splices), each
    /// through the donation checks: a few seconds of what libFuzzer does for hours.
    @Test func seededMutationsOfTheDonationCorpus() throws {
        let seeds = try Self.inputs("DonationJSON", kinds: ["corpus"]).map(\.bytes)
        let interesting: [[UInt8]] = [
            Array("\\u".utf8), Array("\\ud800".utf8), Array("1e400".utf8), [0], [0xC0], [0xFF], Array("\"".utf8),
            Array("{".utf8), Array("[".utf8), Array("-0".utf8), Array("9999-12-31T23:59:60.999999Z".utf8),
        ]
        var random = SeededRandom(seed: 20_261_130)
        var problems: [String] = []
        for round in 0..<15_000 {
            var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(random.next() % 4)) where !bytes.isEmpty {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 6 {
                case 0: bytes[at] ^= UInt8(1 << (random.next() % 8))
                case 1: bytes[at] = UInt8(truncatingIfNeeded: random.next())
                case 2: bytes.insert(contentsOf: interesting[Int(random.next() % UInt64(interesting.count))], at: at)
                case 3: bytes.removeSubrange(at..<min(bytes.count, at + 1 + Int(random.next() % 8)))
                case 4:
                    let other = seeds[Int(random.next() % UInt64(seeds.count))]
                    let from = Int(random.next() % UInt64(other.count))
                    bytes.replaceSubrange(at..<bytes.count, with: other[from...])
                default: bytes.insert(bytes[at], at: at)
                }
            }
            for problem in DonationJSONHarness.check(bytes) {
                problems.append("round \(round): \(problem): \(String(decoding: bytes.prefix(200), as: UTF8.self))")
            }
        }
        #expect(problems == [])
    }

    /// Every plist of the corpus and every plist input a fuzzing run turned up, as `suggest share --extension`:
    /// the binary reads it and answers (or refuses it in one line), never dies of a signal.
    @Test func propertyListCorpusThroughShare() throws {
        let fixture = try StoreFixture("fuzz-plist")
        try fixture.importLines(Donations.lines(Donations.make(count: 30, prefix: "p", conversations: 5, seed: 8)))
        var failures: [String] = []
        for input in try Self.inputs("PropertyList") {
            let path = fixture.scratch + "/extension.plist"
            try writeFile(path, input.bytes)
            let outcome = try fixture.run([
                "share", "--extension", path, "--attachment", "public.url=https://example.com", "--json-output",
            ])
            if outcome.signal != nil || ![0, 1, 64].contains(outcome.status ?? -1)
                || (outcome.status != 0 && outcome.errorLines.count != 1)
            {
                failures.append("\(input.name): \(outcome)")
            }
        }
        #expect(failures == [])
    }

    /// Every activation rule of the corpus and of fuzzing runs, in an Info.plist, through `suggest share`.
    @Test func activationPredicateCorpusThroughShare() throws {
        let fixture = try StoreFixture("fuzz-rule")
        try fixture.importLines(Donations.lines(Donations.make(count: 30, prefix: "p", conversations: 5, seed: 8)))
        var failures: [String] = []
        for input in try Self.inputs("ActivationPredicate") {
            var rule = ""
            for scalar in String(decoding: input.bytes, as: UTF8.self).unicodeScalars {
                switch scalar {
                case "&": rule += "&amp;"
                case "<": rule += "&lt;"
                case ">": rule += "&gt;"
                default: rule.unicodeScalars.append(scalar)
                }
            }
            let plist = """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>NSExtension</key><dict><key>NSExtensionAttributes</key><dict>
                <key>NSExtensionActivationRule</key><string>\(rule)</string></dict></dict></dict></plist>
                """
            let path = fixture.scratch + "/extension.plist"
            try writeFile(path, plist)
            for attachment in ["public.url=https://example.com", "public.jpeg=photo.jpg"] {
                let outcome = try fixture.run([
                    "share", "--extension", path, "--attachment", attachment, "--json-output",
                ])
                if outcome.signal != nil || ![0, 1, 64].contains(outcome.status ?? -1)
                    || (outcome.status != 0 && outcome.errorLines.count != 1)
                {
                    failures.append("\(input.name): \(outcome)")
                }
            }
        }
        #expect(failures == [])
    }
}
