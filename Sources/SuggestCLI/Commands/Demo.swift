import CSystem
import SuggestCore
import SuggestSQLiteStore

/// `suggest demo`: the main job on the bundled sample data, in a throwaway store, printing each command it runs.
enum Demo: Command {
    static let name = "demo"
    static let summary = "Import the bundled sample history into a throwaway store and show the ranking at work."
    static let usage = "[--data FILE] [--keep]"
    static let options: [OptionSpec] = [
        .option("--data", "FILE", "The history to use (default: SampleData/donations.jsonl)."),
        .flag("--keep", "Keep the throwaway store and print its path."),
    ]
    static let discussion = """
        Run it from the project's root (where SampleData/ is): swift run -c release suggest demo
        Every step is a real 'suggest' command line, printed before its output, so you can repeat it by hand.
        """

    /// The moment the demo ranks at: the morning after the sample history ends.
    static let demoMoment = "2026-11-30T09:00:00Z"

    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32 {
        try arguments.expectPositionals(atMost: 0)
        let data = arguments.value("--data") ?? "SampleData/donations.jsonl"
        guard access(data, R_OK) == 0 else {
            throw CommandError.usage(
                "cannot read \(data); run the demo from the project's root or give --data FILE")
        }
        var template = Array("/tmp/suggest-demo-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } })
        else {
            throw CommandError.failure("cannot create a temporary store directory")
        }
        let store = String(cString: made)
        defer { if !arguments.flag("--keep") { removeTree(store) } }
        let common = ["--store", store]
        let steps: [(String, [String])] = [
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
            ("The share flow: Signal's activation rule accepts a photo; the person picked Juan's suggestion; send it.",
             ["share", "--extension", "SampleData/extensions/signal.plist", "--attachment", "public.jpeg=beach.jpg",
              "--conversation", "u-juan", "--at", demoMoment, "--limit", "3", "--send"]),
            ("A PDF-only extension does not apply to a photo.",
             ["share", "--extension", "SampleData/extensions/apple-pdf-example.plist",
              "--attachment", "public.jpeg=beach.jpg", "--at", demoMoment]),
            ("Deleting a chat removes it from the ranking and from the disk, at once.",
             ["delete", "--conversation", "u-juan"]),
            ("", ["list", "--at", demoMoment, "--limit", "5"]),
            ("A suggestion picked before the deletion preselects nothing: the person gets the list back.",
             ["share", "--attachment", "public.jpeg=beach.jpg", "--conversation", "u-juan", "--at", demoMoment,
              "--limit", "3"]),
        ]
        for (explanation, command) in steps {
            if !explanation.isEmpty { try io.out("\n# \(explanation)\n") }
            try io.out("$ suggest " + command.map(quoted).joined(separator: " ") + " --store $STORE\n")
            try io.standardOutput.flush()
            let code = SuggestCommandLine.run(command + common, io: io)
            guard code == ExitCode.success else { return code }
        }
        try io.out(arguments.flag("--keep") ? "\nThe store is kept at \(store)\n" : "\nThe throwaway store was removed.\n")
        return ExitCode.success
    }

    static func quoted(_ word: String) -> String {
        word.contains(" ") || word.isEmpty ? "'" + word + "'" : word
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
