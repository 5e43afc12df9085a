import CSystem
import SuggestCore
import SuggestSQLiteStore

/// `suggest demo`: the main job on the bundled sample data, in a throwaway store, printing each command it runs.
enum Demo: Command {
    static let name = "demo"
    static let summary = "Import the bundled sample history into a throwaway store and show the ranking at work."
    static let usage = "[--data FILE] [--keep]"
    static let options: [OptionSpec] = [
        .option(
            "--data", "FILE",
            "The history to use (default: the project's SampleData/donations.jsonl); with another, only the steps "
                + "that name no conversation of the sample."),
        .flag("--keep", "Keep the throwaway store and print its path."),
    ]
    static let discussion = """
        Runs from any directory: the sample data is found in SampleData/ of the working directory, else of the
        project the binary was built in (swift run -c release suggest demo). Every step is a real 'suggest'
        command line, printed before its output with absolute paths, so you can paste it to repeat it by hand,
        after the STORE=... line it prints first.
        """

    /// The moment the demo ranks at: the morning after the sample history ends.
    static let demoMoment = "2026-11-30T09:00:00Z"

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let sample = sampleDirectory(io)
        let data: String
        // Most steps name the sample's conversations (u-juan, g-climbing): on another history, `share --send` to
        // u-juan failed and the demo ended with exit 1.
        let isSample: Bool
        if let given = arguments.value("--data") {
            guard !given.isEmpty else { throw CommandError.usage("--data names no file; give a history's FILE") }
            guard access(given, R_OK) == 0 else {
                throw CommandError.usage("cannot read \(given); give --data a readable FILE")
            }
            data = absolute(given, in: io)
            isSample = sample.map { FileOutput.isSameFile($0 + "/donations.jsonl", data) } ?? false
        } else if let sample {
            data = sample + "/donations.jsonl"
            isSample = true
        } else {
            throw CommandError.usage(
                "cannot find SampleData/donations.jsonl here or in the project suggest was built in; give --data FILE")
        }
        // The share steps need the sample's extensions; with another history they are left out.
        let extensions = sample.map { $0 + "/extensions/" }.flatMap { directory in
            access(directory + "signal.plist", R_OK) == 0 ? directory : nil
        }
        let temporary = io.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((temporary + "/suggest-demo-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } })
        else {
            throw CommandError.failure(
                "cannot create a temporary store directory in \(temporary): \(ErrorNumber.describeLast()); "
                    + "set TMPDIR to a writable directory")
        }
        let store = String(cString: made)
        defer { if !arguments.flag("--keep") { removeTree(store) } }
        let common = ["--store", store]
        let steps =
            isSample
            ? sampleSteps(data: data, extensions: extensions)
            : [
                ("Keep all of the history, whatever today's date.",
                 ["config", "--max-age-days", "0", "--idle-days", "0"]),
                ("Record the history.", ["import", data, "--quiet"]),
                ("The share sheet's row now, and why each one is there.", ["list", "--limit", "5", "--explain"]),
                ("The same row as the contract's JSON, for the app's share sheet.",
                 ["list", "--limit", "3", "--json"]),
            ]
        // Pasted in order, from any directory, these lines repeat the demo: `suggest` found as the demo was, and
        // the store named once.
        try io.out("# Each step below is a command you can paste to repeat it, from any directory.\n")
        if let directory = executableDirectory() {
            try io.out("# The first puts this suggest on your PATH, if it is not there yet.\n")
            try io.out("$ export PATH=\(quoted(directory)):\"$PATH\"\n")
        }
        try io.out("$ STORE=\(quoted(store))\n")
        for (explanation, command) in steps {
            if !explanation.isEmpty { try io.out("\n# \(explanation)\n") }
            try io.out("$ suggest " + command.map(quoted).joined(separator: " ") + " --store \"$STORE\"\n")
            try io.standardOutput.flush()
            let code = SuggestCommandLine.run(command + common, io: io)
            guard code == ExitCode.success else { return code }
        }
        try io.out(
            arguments.flag("--keep")
                ? "\nThe store is kept at \(store)\n"
                : "\nThe throwaway store was removed ('suggest demo --keep' keeps it; the commands above make it "
                    + "again).\n")
        return ExitCode.success
    }

    /// The demo's steps on the bundled sample, whose conversations they name (u-juan, g-climbing, g-work).
    /// - Parameter extensions: the sample's share extensions' directory; the share steps need it.
    static func sampleSteps(data: String, extensions: String?) -> [(String, [String])] {
        var steps: [(String, [String])] = [
            ("The sample history is dated November 2026; keep all of it, whatever today's date.",
             ["config", "--max-age-days", "0", "--idle-days", "0"]),
            ("Record the history: people and groups, sent and received, renames and new pictures.",
             ["import", data, "--quiet"]),
            ("The share sheet's row on the morning of \(demoMoment), and why each one is there.",
             ["list", "--at", demoMoment, "--limit", "5", "--explain"]),
            ("Sharing a photo with Juan in it: conversations with Juan, and those that get photos, rise.",
             ["list", "--at", demoMoment, "--limit", "5", "--content-type", "public.jpeg", "--person", "u-juan"]),
            ("The same row as the contract's JSON, for the app's share sheet.",
             ["list", "--at", demoMoment, "--limit", "3", "--json"]),
            ("\"Suggest Less\" for the climbing group, and never suggest the work chat.",
             ["feedback", "--less", "--conversation", "g-climbing"]),
            ("", ["block", "--conversation", "g-work"]),
            ("", ["list", "--at", demoMoment, "--limit", "5"]),
        ]
        if let extensions {
            steps += [
                ("The share flow: Signal's activation rule accepts a photo; the person picked Juan's suggestion; send it.",
                 ["share", "--extension", extensions + "signal.plist", "--attachment", "public.jpeg=beach.jpg",
                  "--conversation", "u-juan", "--at", demoMoment, "--limit", "3", "--send"]),
                ("A PDF-only extension does not apply to a photo.",
                 ["share", "--extension", extensions + "apple-pdf-example.plist",
                  "--attachment", "public.jpeg=beach.jpg", "--at", demoMoment]),
            ]
        }
        steps += [
            ("Deleting a chat removes it from the ranking and from the disk, at once.",
             ["delete", "--conversation", "u-juan"]),
            ("", ["list", "--at", demoMoment, "--limit", "5"]),
            ("A suggestion picked before the deletion preselects nothing: the person gets the list back.",
             ["share", "--attachment", "public.jpeg=beach.jpg", "--conversation", "u-juan", "--at", demoMoment,
              "--limit", "3"]),
        ]
        return steps
    }

    /// `SampleData` in the working directory, else in the project the running binary was built in (it lives in
    /// `.build/<triple>/<configuration>/` there), else `nil`.
    static func sampleDirectory(_ io: CommandIO) -> String? {
        var candidates = [absolute("SampleData", in: io)]
        if var directory = executableDirectory() {
            for _ in 0..<4 {
                candidates.append(directory + "/SampleData")
                guard let slash = directory.lastIndex(of: "/"), slash != directory.startIndex else { break }
                directory = String(directory[..<slash])
            }
        }
        return candidates.first { access($0 + "/donations.jsonl", R_OK) == 0 }
    }

    /// The directory of the running executable, from `/proc/self/exe` (links resolved), or `nil` where there is
    /// none to read.
    static func executableDirectory() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { raw in
            raw.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: raw.count) { path in
                    readlink("/proc/self/exe", path, raw.count - 1)
                }
            } ?? -1
        }
        guard count > 0, let path = SuggestCommandLine.validUTF8(Array(buffer.prefix(count))),
            let slash = path.lastIndex(of: "/"), slash != path.startIndex
        else { return nil }
        return String(path[..<slash])
    }

    /// `path` made absolute against `io.currentDirectory` (itself against the process's working directory), so
    /// that a printed command works from anywhere.
    static func absolute(_ path: String, in io: CommandIO) -> String {
        func joined(_ base: String, _ path: String) -> String {
            if path == "." { return base }
            return (base == "/" ? "" : base) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
        }
        if path.hasPrefix("/") { return path }
        let base =
            io.currentDirectory.hasPrefix("/")
            ? io.currentDirectory : joined(workingDirectory() ?? ".", io.currentDirectory)
        return joined(base, path)
    }

    /// The process's working directory.
    static func workingDirectory() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let found = buffer.withUnsafeMutableBufferPointer { raw in
            raw.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: raw.count) { getcwd($0, raw.count) != nil }
            } ?? false
        }
        guard found else { return nil }
        return SuggestCommandLine.validUTF8(Array(buffer.prefix(while: { $0 != 0 })))
    }

    /// `word` as a POSIX shell reads it back: as it is when it holds only safe characters, else in single quotes.
    static func quoted(_ word: String) -> String {
        let safe = word.unicodeScalars.allSatisfy { scalar in
            (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
                || "-_./:=,+@%".unicodeScalars.contains(scalar)
        }
        if safe && !word.isEmpty { return word }
        var quoted = "'"
        for character in word { quoted += character == "'" ? "'\\''" : String(character) }
        return TerminalText.escaped(quoted + "'")
    }

    /// Removes the throwaway store directory and its files (it holds only files, no subdirectories).
    static func removeTree(_ path: String) {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(directory)
        }
        rmdir(path)
    }
}
