import SuggestCore
import SuggestSQLiteStore

import SuggestCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The checks the command-line fuzz target makes on one input: a whole `suggest` command line run in process by
/// `SuggestCommandLine.run`, against a fresh copy of a small store each time.
///
/// The input is the arguments separated by NUL bytes, then optionally a 0x01 byte and what standard input holds
/// (`donate --json`, `import -`, `share --json`). Checks: the exit code is 0, 1 or 64; a failure says why in one
/// line on standard error; the store still opens afterwards and its top K equals brute force.
///
/// Inputs that would reach outside the throwaway store are skipped (`--store`, `--html`, `demo`, absolute paths,
/// `..`), and so are the inputs that reach the bugs known and not yet fixed (docs/robustness.md: B, a crash on
/// dates beyond the years 0001-9999, and C, line breaks echoed into error messages), unless
/// `SUGGEST_FUZZ_KNOWN_BUGS=1` is set, so that the fuzzer looks for new ones.
public final class CommandLineHarness {
    /// The moment the template store's donations lead up to: 2026-11-30T09:00:00Z.
    public static let templateMoment = Timestamp(seconds: 1_796_029_200)
    /// The most arguments one input is split into.
    static let maximumArguments = 16

    let root: String
    let template: [UInt8]
    let skipsKnownBugs: Bool
    private var serial = 0

    /// Makes a scratch directory (in `$TMPDIR`, else `/tmp`) and the template store: 60 donations over 12
    /// conversations, kept forever. libFuzzer ends the process without deinitializers, so `scripts/fuzz.sh` points
    /// `TMPDIR` at a directory of its own and empties it before each run.
    public init() throws {
        let temporary = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var pattern = Array((temporary + "/suggest-fuzz-cli-XXXXXX").utf8CString)
        guard let made = pattern.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw HarnessFailure("cannot create a scratch directory")
        }
        root = String(cString: made)
        skipsKnownBugs = getenv("SUGGEST_FUZZ_KNOWN_BUGS").map { String(cString: $0) } != "1"
        let store = root + "/template"
        var lines = ""
        for index in 0..<60 {
            let conversation = index % 12
            let donation = Interaction(
                identifier: "t-\(index)", groupIdentifier: "g-\(index % 4)",
                date: Self.templateMoment.adding(-Double(60 - index) * 3_600),
                direction: index % 3 == 0 ? .incoming : .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "c-\(conversation)",
                    speakableGroupName: conversation % 2 == 0 ? "Group \(conversation)" : nil,
                    serviceName: conversation % 3 == 0 ? "sms" : "chat.example",
                    recipients: [Person(customIdentifier: "u-\(conversation)", displayName: "Person \(conversation)")],
                    contentTypes: index % 4 == 0 ? ["public.jpeg"] : []))
            lines += donation.jsonLine + "\n"
        }
        for (arguments, input) in [
            (["config", "--max-age-days", "0", "--idle-days", "0"], ""), (["import", "-", "--quiet"], lines),
            (["block", "--conversation", "c-5"], ""),
        ] {
            let error = CapturedOutput()
            let io = CommandIO(
                standardOutput: CapturedOutput(), standardError: error, standardInput: ByteSource(text: input),
                environment: ["SUGGEST_STORE": store, "HOME": root], currentDirectory: root)
            guard SuggestCommandLine.run(arguments, io: io) == 0 else {
                throw HarnessFailure("cannot build the template store: \(error.text)")
            }
        }
        // The commands leave their last pages in the write-ahead log (they checkpoint every so many pages, not at
        // exit); a store opened with SQLite's default checkpoints it into the database file and removes it when it
        // closes. Then the database file holds everything (no -wal left).
        do { _ = try SQLiteDonationStore.open(StoreLocation(directory: store)) } catch {
            throw HarnessFailure("cannot reopen the template store: \(error)")
        }
        var bytes: [UInt8] = []
        if let file = fopen(store + "/suggest.sqlite", "rb") {
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = fread(&chunk, 1, chunk.count, file)
                guard count > 0 else { break }
                bytes += chunk[0..<count]
            }
            fclose(file)
        }
        guard !bytes.isEmpty, access(store + "/suggest.sqlite-wal", F_OK) != 0 else {
            throw HarnessFailure("the template store was not closed cleanly")
        }
        template = bytes
    }

    deinit { Self.remove(root) }

    /// Splits an input into arguments and standard input.
    public static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> (arguments: [String], input: [UInt8]) {
        let separator = bytes.firstIndex(of: 0x01) ?? bytes.count
        let input = separator < bytes.count ? Array(bytes[(separator + 1)...]) : []
        let arguments = bytes[..<separator].split(separator: 0, omittingEmptySubsequences: false)
            .prefix(maximumArguments).map { String(decoding: $0, as: UTF8.self) }
        return (arguments, input)
    }

    /// Whether the command line stays inside the throwaway store and away from the known crashes.
    func admits(_ arguments: [String]) -> Bool {
        guard let command = arguments.first, command != "demo" else { return false }
        for argument in arguments {
            if argument.hasPrefix("--store") || argument.hasPrefix("--html") || argument.hasPrefix("/")
                || argument.hasPrefix("~") || argument.contains("..")
            {
                return false
            }
        }
        guard skipsKnownBugs else { return true }
        // Known bug B: Unix seconds beyond the years 0001-9999 trap in Timestamp.rfc3339.
        for (_, date) in Self.dates(in: arguments) where !(date >= Timestamp.earliest && date <= Timestamp.latest) {
            return false
        }
        return true
    }

    /// The dates given to `--at`, `--before` and `--date`, read as the command line reads them.
    static func dates(in arguments: [String]) -> [(option: String, date: Timestamp)] {
        var found: [(option: String, date: Timestamp)] = []
        for (index, argument) in arguments.enumerated() {
            for option in ["--at", "--before", "--date"] {
                var text: String?
                if argument == option, index + 1 < arguments.count { text = arguments[index + 1] }
                if argument.hasPrefix(option + "=") { text = String(argument.dropFirst(option.count + 1)) }
                guard let text else { continue }
                if let seconds = Double(text), seconds.isFinite {
                    found.append((option, Timestamp(seconds: seconds)))
                } else if let date = Timestamp(rfc3339: text) {
                    found.append((option, date))
                }
            }
        }
        return found
    }

    /// The problems found with one input; empty when there are none (or when the input is skipped).
    public func check(_ bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        let (arguments, input) = Self.split(bytes)
        guard admits(arguments) else { return [] }
        serial += 1
        let store = root + "/s\(serial)"
        defer { Self.remove(store) }
        guard mkdir(store, 0o700) == 0, let file = fopen(store + "/suggest.sqlite", "wb") else {
            return ["harness: cannot copy the template store"]
        }
        _ = template.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)

        let output = CapturedOutput()
        let error = CapturedOutput()
        let io = CommandIO(
            standardOutput: output, standardError: error, standardInput: ByteSource(bytes: input),
            environment: ["SUGGEST_STORE": store, "HOME": root], currentDirectory: root)
        let code = SuggestCommandLine.run(arguments, io: io)
        var problems: [String] = []
        let shown = arguments.map { String($0.prefix(40)).debugDescription }.joined(separator: " ")
        if ![0, 1, 64].contains(code) { problems.append("\(shown): exit \(code)") }
        // Known bug C: an argument with a line break is echoed as it is in the error message, on two lines.
        let echoesLineBreaks = skipsKnownBugs && arguments.contains { $0.contains("\n") || $0.contains("\r") }
        if code != 0 && !echoesLineBreaks {
            let lines = error.text.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.count != 2 || !lines[1].isEmpty || lines[0].isEmpty {
                problems.append(
                    "\(shown): exit \(code) with \(lines.count - 1) lines on stderr: \(error.text.prefix(300))")
            }
        }
        // The store still opens, and its ranking state is the one its donations give.
        do {
            let opened = try SQLiteDonationStore.open(StoreLocation(directory: store))
            let context = RankingContext(
                at: Self.templateMoment, limit: 4, notIdleSince: Self.templateMoment.adding(-30 * 86_400))
            let fast = try opened.rankedConversations(account: "default", context: context)
            let slow = try opened.suggestionsByBruteForce(account: "default", context: context)
            if fast != slow {
                problems.append("\(shown): top K \(fast.map(\.conversationIdentifier)) is not brute force")
            }
        } catch {
            problems.append("\(shown): the store no longer opens: \(error)")
        }
        return problems
    }

    public func check(_ bytes: [UInt8]) -> [String] { bytes.withUnsafeBufferPointer { check($0) } }

    /// Removes a directory and the files in it (stores hold files only).
    static func remove(_ path: String) {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                guard name != "." && name != ".." else { continue }
                if unlink(path + "/" + name) != 0 { remove(path + "/" + name) }
            }
            closedir(directory)
        }
        rmdir(path)
    }
}

/// The harness could not set itself up.
public struct HarnessFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
