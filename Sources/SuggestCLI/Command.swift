import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore
import Synchronization

/// One subcommand of `suggest`: its name, help and options, and what it does.
protocol Command: Sendable {
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The usage line(s) after `suggest NAME`.
    static var usage: String { get }
    /// More help after the options, examples first.
    static var discussion: String { get }
    static var options: [OptionSpec] { get }
    static func run(_ arguments: ParsedArguments, _ io: CommandIO) throws -> Int32
}

extension Command {
    static var discussion: String { "" }

    /// The full `--help` text.
    static var help: String {
        var text = "\(summary)\n\nUsage: suggest \(name) \(usage)\n\nOptions:\n"
        let all = options + [.flag("--help", "Show this help.")]
        let width = all.map { option in option.name.count + (option.value.map { $0.count + 1 } ?? 0) }.max() ?? 0
        for option in all {
            let label = option.name + (option.value.map { " " + $0 } ?? "")
            text += "  " + label + String(repeating: " ", count: width - label.count + 2) + option.help
            if option.repeatable { text += " (repeatable)" }
            text += "\n"
        }
        if !discussion.isEmpty { text += "\n" + discussion + (discussion.hasSuffix("\n") ? "" : "\n") }
        return text
    }
}

/// `paragraph` broken into lines of at most `width` characters, at spaces: help built from values (the policy's
/// channels) cannot be wrapped by hand.
func wrapped(_ paragraph: String, width: Int = 110) -> String {
    var lines: [String] = []
    var line = ""
    for word in paragraph.split(separator: " ") {
        if !line.isEmpty && line.count + 1 + word.count > width {
            lines.append(line)
            line = ""
        }
        line += (line.isEmpty ? "" : " ") + word
    }
    if !line.isEmpty { lines.append(line) }
    return lines.joined(separator: "\n")
}

/// Options that every command touching a store shares.
enum StoreOptions {
    static let store = OptionSpec.option(
        "--store", "DIR|URL",
        "The store: a directory, or redis://HOST:PORT[,...] for a Redis Cluster (default: $SUGGEST_STORE, else "
            + "$XDG_DATA_HOME/suggest, else ~/.local/share/suggest).")
    static let account = OptionSpec.option("--account", "ID", "Whose history (default: default).")
    static let all = [store, account]

    /// The account named by `--account`, or the default one.
    static func account(_ arguments: ParsedArguments) throws(CommandError) -> String {
        guard let account = arguments.value("--account") else { return Interaction.defaultAccount }
        return try name(account, option: "--account")
    }

    /// A name given by an option (an account, a conversation, an identifier), held to the rules of a donation's
    /// strings: one that no donation can hold names nothing, and a command that found "nothing" for it, or
    /// stored it, would mislead.
    /// The rules are the library's (`Interaction.checkName`), worded with the option's name.
    static func name(_ value: String, option: String) throws(CommandError) -> String {
        do {
            try Interaction.checkName(value, field: option)
        } catch {
            throw CommandError.usage("\(option) \(error.message)")
        }
        return value
    }

    /// The store directory the options and the environment name.
    /// - Throws: `CommandError.usage` when they name none (an empty `--store`, `HOME` unset) or name it through a
    ///   variable that is not UTF-8.
    static func location(_ arguments: ParsedArguments, _ io: CommandIO) throws(CommandError) -> StoreLocation {
        // A URL of another scheme (`rediss://`, `REDIS://`, `postgres://`) is a mistake, not a directory to create.
        if let named = arguments.value("--store") ?? io.environment["SUGGEST_STORE"], let scheme = urlScheme(named) {
            throw CommandError.usage(
                "the store '\(RedisDonationStore.redacted(String(named.prefix(200))))' is a URL of scheme '\(scheme)', which "
                    + "suggest does not know: give a directory, or redis://HOST:PORT (in lower case; TLS is not supported)")
        }
        // `redis:HOST:PORT` without its `//` would be a directory of that name, created, and the donations
        // recorded there with no word of it.
        if let named = arguments.value("--store") ?? io.environment["SUGGEST_STORE"], looksLikeARedisURL(named) {
            // Not echoed: it may hold a password, which `redacted` finds only after `://`.
            throw CommandError.usage(
                "the store looks like a Redis URL without its '//' (redis:...): write redis://HOST:PORT[,HOST:PORT...], "
                    + "or start it with ./ for a directory of that name")
        }
        let location: StoreLocation
        do {
            location = try StoreLocation.resolve(explicit: arguments.value("--store"), environment: io.environment)
        } catch {
            throw CommandError.usage(error.message)
        }
        if let variable = location.variable, let bytes = io.unreadableVariables[variable] {
            throw CommandError.usage(
                "the environment variable \(variable) ('\(bytes)') is not valid UTF-8; set it to a UTF-8 path or give "
                    + "--store DIR")
        }
        return location
    }

    /// Opens the store the options name and brings it up to date (`DonationStore.maintain` for the account: expired
    /// donations deleted, state built under another policy rebuilt), before the command reads or writes it.
    ///
    /// A command is a short process: it leaves the write-ahead log in place when it exits instead of checkpointing
    /// it (two `fdatasync`s, and deleting and creating the log and index files, on every command); a commit that
    /// leaves `checkpointPages` pages in the log checkpoints and truncates it instead. A crash of the process loses
    /// nothing; a power loss may lose the writes since the last checkpoint. `import`, every deletion and every
    /// expiry checkpoint and truncate the log at once (docs/robustness.md, "Durability").
    /// - Parameters:
    ///   - account: whose expired donations to delete; `nil` for every account's.
    ///   - creating: whether a missing store is created. Only commands that record something create one (`donate`,
    ///     `import`, `block`, `feedback --less`, `config` with a setting); the others, which read or remove, say "no
    ///     such store" (exit 1) instead of leaving an empty store behind a mistyped `--store`.
    static func open(
        _ arguments: ParsedArguments, _ io: CommandIO, maintaining account: String?, creating: Bool,
        reading: Bool = false
    ) throws -> any DonationStore {
        let store = try StoreOpening.opener(arguments, io: io, creating: creating, reading: reading)()
        if let problem = (store as? RedisDonationStore)?.durabilityProblem {
            // Its upkeep would write, and be refused: left to a command once it is fixed.
            io.err("suggest: \(problem) (reading goes on; writes are refused until it is fixed)\n")
            return store
        }
        do {
            if (try? store.owesRebuild()) == true {
                // The first command after such an upgrade waits for it (5 s for a million donations), said first.
                io.err(
                    "suggest: this version derives the ranking's state by a changed rule; rebuilding the store's "
                        + "state once, which may take a few seconds per million donations\n")
            }
            _ = try store.maintain(account: account, now: .now(), budget: .unbounded)
        } catch let error as StoreError
            where error.kind == .busy || error.kind == .unavailable
            || (reading && (error.kind == .misconfigured || error.kind == .readOnly))
        {
            // Upkeep that cannot be done this moment (another process holds the lock, a replica does not confirm)
            // stays owed to the next command; this one goes on, and fails on its own if it cannot do its work. A
            // `list` failed while a Redis replica was stalled, though reading needed nothing of it; and a user who
            // may only read a store could not list it once a new version had state to rebuild in it. Said, since
            // until then what it shows may still hold expired donations, or state of the version before.
            io.err("suggest: upkeep (expiry, rebuilding) could not run now and is left to a later command: \(error)\n")
        }
        return store
    }

    /// The scheme of a store named as a URL (`letters://...`), when it names one.
    private static func urlScheme(_ named: String) -> String? {
        let bytes = Array(named.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: Array("://".utf8)) else {
            return nil
        }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self)
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return String(scheme)
    }

    /// Whether a store that is not a `redis://` URL starts as one would, less its slashes (`redis:`, `rediss:/`, in
    /// any case).
    private static func looksLikeARedisURL(_ named: String) -> Bool {
        let lowered = named.lowercased()
        return (lowered.hasPrefix("redis:") || lowered.hasPrefix("rediss:")) && !lowered.hasPrefix("redis://")
            && !lowered.hasPrefix("rediss://")
    }

    /// Whether the store named is a Redis Cluster (`redis://HOST:PORT[,HOST:PORT...]`) rather than a directory.
    static func redisURL(_ arguments: ParsedArguments, environment: [String: String]) -> String? {
        let named = arguments.value("--store") ?? environment["SUGGEST_STORE"]
        guard let named, named.hasPrefix("redis://") else { return nil }
        return named
    }

    /// The store the options name, as `config` shows it: the directory, or the cluster's URL without its password.
    static func describedLocation(_ arguments: ParsedArguments, _ io: CommandIO) throws(CommandError) -> String {
        if let url = redisURL(arguments, environment: io.environment) { return RedisDonationStore.redacted(url) }
        return try location(arguments, io).directory
    }

    /// About 400 KB of log at most (a donation writes 10 to 20 pages): every command reads the whole log when it
    /// opens the store (SQLite rebuilds its index), so it is kept small.
    static let checkpointPages = 100
}

/// How a program other than `suggest` (the server's executable) opens the store that `--store` and the environment
/// name, as the commands do.
public enum StoreOpening {
    /// What opens a connection to the store the options name: the embedded store in a directory, or the store on the
    /// Redis Cluster a `redis://` URL names (one client, shared by every connection the opener makes). Nothing is
    /// opened until it is called.
    /// - Parameters:
    ///   - creating: whether a missing directory store is created (a cluster always exists).
    ///   - reading: for a command that only reads (`RedisDonationStore.open(client:ranking:types:mirror:reading:)`).
    /// - Throws: `CommandError.usage` when the options name no store (an empty `--store`), or a URL that does not
    ///   parse.
    public static func opener(_ arguments: ParsedArguments, io: CommandIO, creating: Bool = true, reading: Bool = false)
        throws -> @Sendable () throws -> any DonationStore
    {
        if let url = StoreOptions.redisURL(arguments, environment: io.environment) {
            let client = try redisClient(url)
            return { try RedisDonationStore.open(client: client, reading: reading) }
        }
        let location = try StoreOptions.location(arguments, io)
        return {
            try SQLiteDonationStore.open(
                location, checkpoints: .everyPages(StoreOptions.checkpointPages), createIfMissing: creating)
        }
    }

    /// What a long-lived server opens its connections with, and what it reports of them.
    public struct Serving: Sendable {
        /// Opens one connection.
        public let open: @Sendable () throws -> any DonationStore
        /// The store's lines for `/metrics`, in Prometheus' text format: the ranking mirror's queries, rebuilds
        /// and size, and the group commits of its writing connection (none for a Redis Cluster store).
        public let metrics: @Sendable () -> String
        /// Whether the store is across the network (a Redis Cluster), so that every query waits on round trips.
        public let isRemote: Bool
    }

    /// The connections of a long-lived server: a page cache that keeps what requests touch
    /// (`serverPageCacheKiB`), checkpoints left to the server's background task (with one in a commit only past
    /// `serverCheckpointPages`, which writes the log over in place), one ranking mirror shared by every connection
    /// (`serverMirror`), which the background checkpoint keeps up to date, and one connection that writes every
    /// donation (`GroupCommitWriter`).
    /// - Parameter creating: whether a missing directory store is created.
    /// - Throws: as `opener(_:io:creating:)`.
    public static func serving(_ arguments: ParsedArguments, io: CommandIO, creating: Bool = true) throws -> Serving {
        if let url = StoreOptions.redisURL(arguments, environment: io.environment) {
            // One client and one mirror for every connection, as for the embedded store.
            let client = try redisClient(url)
            let mirror = RedisRankingMirror(serverMirror)
            // The first connection is the server's start: a cluster that cannot keep the promise of durability is
            // refused then, as by any command that writes. A later one (a worker's, an export's) may be opened
            // after a failover left a master of `appendfsync everysec` without a replica: it opens for reading,
            // so that GETs go on, and its writes are refused (`misconfigured`, 503) until the promise holds again.
            // Opened for writing, it failed, and every export and new worker's GET with it.
            let started = Atomic<Bool>(false)
            return Serving(
                open: {
                    let store = try RedisDonationStore.open(
                        client: client, mirror: mirror, reading: started.load(ordering: .acquiring))
                    started.store(true, ordering: .releasing)
                    return store
                },
                metrics: { mirrorMetrics(mirror.statistics) }, isRemote: true)
        }
        let location = try StoreOptions.location(arguments, io)
        // One mirror for every connection the server opens: the accounts' ranking state once, not per worker.
        let mirror = RankingMirror(serverMirror)
        // Every connection must have the file the first one opened: a store deleted under the server, then created
        // again at its path, would take the donations of the connections opened since, unseen by the older ones.
        // Only the first open creates a missing store.
        let firstFile = Mutex<DatabaseFile?>(nil)
        let connection = { @Sendable (groupCommit: GroupCommitWriter?, pageCacheKiB: Int) throws -> SQLiteDonationStore in
            let first = firstFile.withLock { $0 }
            let store = try SQLiteDonationStore.open(
                location, checkpoints: .everyPagesInPlace(serverCheckpointPages),
                createIfMissing: creating && first == nil, pageCacheKiB: pageCacheKiB,
                largeImportCacheKiB: serverPageCacheKiB, mirror: mirror, groupCommit: groupCommit,
                pacingRewrites: .server, waitingOutImports: false)
            if let first {
                try store.requireFile(first)
            } else {
                let identity = try store.fileIdentity()
                try firstFile.withLock { known in
                    if let known, known != identity { try store.requireFile(known) }
                    known = identity
                }
            }
            return store
        }
        // One connection writes every donation, so that its page cache stays valid (`GroupCommitWriter`); it has the
        // large cache. The others (one per worker and handler thread) read little: queries go to the mirror.
        let groupCommit = GroupCommitWriter { try connection(nil, serverPageCacheKiB) }
        return Serving(
            open: { try connection(groupCommit, serverConnectionPageCacheKiB) },
            metrics: { mirrorMetrics(mirror.statistics) + groupCommitMetrics(groupCommit.statistics) }, isRemote: false)
    }

    /// The client of the Redis Cluster a `redis://` URL names.
    /// - Throws: `CommandError.usage` for a URL that does not parse.
    private static func redisClient(_ url: String) throws -> RedisClusterClient {
        do {
            return try RedisClusterClient(url: url)
        } catch {
            throw CommandError.usage("--store: \(error)")
        }
    }

    /// The ranking mirror's statistics as Prometheus text.
    static func mirrorMetrics(_ statistics: RankingMirrorStatistics) -> String {
        """
        # HELP suggest_ranking_mirror_queries_total Ranking queries, by where they were answered: from memory (hit), \
        or from the store because the account had no mirror (miss), because something was committed since it was built \
        (stale), or because a commit landed while the query ran (abandoned).
        # TYPE suggest_ranking_mirror_queries_total counter
        suggest_ranking_mirror_queries_total{result="hit"} \(statistics.hits)
        suggest_ranking_mirror_queries_total{result="miss"} \(statistics.misses)
        suggest_ranking_mirror_queries_total{result="stale"} \(statistics.staleReads)
        suggest_ranking_mirror_queries_total{result="abandoned"} \(statistics.abandoned)
        # HELP suggest_ranked_answers_total Answers of queries ranked from memory: computed and kept (kept), or given \
        again because nothing was written since and the moment still admits all they list (reused).
        # TYPE suggest_ranked_answers_total counter
        suggest_ranked_answers_total{result="kept"} \(statistics.answersKept)
        suggest_ranked_answers_total{result="reused"} \(statistics.answersReused)
        # HELP suggest_ranking_mirror_rebuilds_total Accounts read into memory: kept, discarded (a commit landed \
        while they were read, or the account is larger than the budget), or failed.
        # TYPE suggest_ranking_mirror_rebuilds_total counter
        suggest_ranking_mirror_rebuilds_total{result="kept"} \(statistics.rebuilds)
        suggest_ranking_mirror_rebuilds_total{result="discarded"} \(statistics.discardedRebuilds)
        suggest_ranking_mirror_rebuilds_total{result="failed"} \(statistics.failures)
        # HELP suggest_ranking_mirror_evictions_total Mirrors dropped to stay within the budget.
        # TYPE suggest_ranking_mirror_evictions_total counter
        suggest_ranking_mirror_evictions_total \(statistics.evictions)
        # HELP suggest_ranking_mirror_accounts Accounts mirrored now.
        # TYPE suggest_ranking_mirror_accounts gauge
        suggest_ranking_mirror_accounts \(statistics.accounts)
        # HELP suggest_ranking_mirror_conversations Conversations of the accounts mirrored now.
        # TYPE suggest_ranking_mirror_conversations gauge
        suggest_ranking_mirror_conversations \(statistics.conversations)
        # HELP suggest_ranking_mirror_bytes About how many bytes the mirrors hold.
        # TYPE suggest_ranking_mirror_bytes gauge
        suggest_ranking_mirror_bytes \(statistics.bytes)

        """
    }

    /// The group commit writer's statistics as Prometheus text.
    static func groupCommitMetrics(_ statistics: GroupCommitWriter.Statistics) -> String {
        """
        # HELP suggest_group_commits_total Transactions that committed requests' donations together.
        # TYPE suggest_group_commits_total counter
        suggest_group_commits_total \(statistics.groups)
        # HELP suggest_group_commit_pieces_total Requests' donations (one, or one batch) those transactions carried.
        # TYPE suggest_group_commit_pieces_total counter
        suggest_group_commit_pieces_total \(statistics.pieces)

        """
    }

    /// A server's ranking mirror (`RankingMirror`): about 64 MiB of accounts' ranking state (an account of 100,000
    /// conversations takes about 30 MB), an account rebuilt once 4 queries have found it out of date.
    public static let serverMirror = RankingMirror.Configuration(byteBudget: 64 << 20, readsBeforeRebuild: 4)

    /// The page cache of a server's writing connection (`GroupCommitWriter`), through which every donation goes:
    /// 12 MiB, enough for the pages most donations touch (the heads of the channel lists, the latest blocks, the
    /// popular conversations); a page past it is one read from the system's cache. Twice that took as many
    /// donations a second and more memory (by hand, GETs then batches and single POSTs on one server: a peak of
    /// 110 MB against 94).
    public static let serverPageCacheKiB = 12_288

    /// The page cache of each of a server's other connections (workers, handler threads): SQLite's default. They
    /// answer queries from the mirror and hand donations to the writing connection, so a large cache would only
    /// fill with the pages of deletions, shares and large batches, once per connection (36 of them by default):
    /// with 24 MiB each, twelve batches of 9,999 donations at once left the server at 347 MB, where it is now at
    /// 65 MB. A batch of `largeImport` donations or more, recorded on the request's own connection, has
    /// `serverPageCacheKiB` for its transaction (a 2 MB cache made one of 65,000 donations 1.5 times slower).
    public static let serverConnectionPageCacheKiB = 2_000

    /// About 256 MB of log: past it, the commit that reaches it checkpoints; below it, the server's checkpoint every
    /// second does, off the requests' path. A donation into a large store adds about 25 pages (100 KB) to the log,
    /// so a server taking 1,600 donations a second passed 64 MB every 0.4 s, before its own checkpoint came, and a
    /// request waited about 140 ms for each of those checkpoints.
    public static let serverCheckpointPages = 65_536
}

/// Parsing of values that several commands take.
///
/// Every numeric option has one grammar: ASCII digits, and for the few that take fractions (days) a `.` and more
/// digits; no sign, no exponent, no spaces, no hexadecimal. `--limit +5` and `--max-age-days 1e3` are refused as
/// `--limit 1e3` is, and the message gives the range. Dates are not options of this kind: they follow the donation
/// format (RFC 3339, or Unix seconds as a JSON number).
enum ValueParsing {
    /// A whole number in `range`.
    /// - Throws: `CommandError.usage` naming `option` and the range.
    static func wholeNumber(_ text: String, option: String, in range: ClosedRange<Int>) throws(CommandError) -> Int {
        guard isDecimal(text, fractions: false), let number = Int(text), range.contains(number) else {
            throw CommandError.usage(
                "\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not "
                    + "'\(text.prefix(40))'")
        }
        return number
    }

    /// A number in `range`, fractions allowed (`1.5`).
    /// - Throws: `CommandError.usage` naming `option`, what the number counts, and the range.
    static func number(
        _ text: String, option: String, of unit: String, in range: ClosedRange<Double>
    ) throws(CommandError) -> Double {
        guard isDecimal(text, fractions: true), let number = Double(text), range.contains(number) else {
            throw CommandError.usage(
                "\(option) takes a number of \(unit) from \(JSONWriter.format(range.lowerBound)) to "
                    + "\(JSONWriter.format(range.upperBound)) (fractions allowed, as in 1.5), not '\(text.prefix(40))'")
        }
        return number
    }

    /// Whether `text` is ASCII digits, optionally (with `fractions`) followed by `.` and more digits.
    static func isDecimal(_ text: String, fractions: Bool) -> Bool {
        var digitsBefore = 0
        var digitsAfter = 0
        var seenPoint = false
        for byte in text.utf8 {
            if byte >= 0x30 && byte <= 0x39 {
                if seenPoint { digitsAfter += 1 } else { digitsBefore += 1 }
            } else if byte == UInt8(ascii: "."), fractions, !seenPoint {
                seenPoint = true
            } else {
                return false
            }
        }
        return digitsBefore > 0 && (!seenPoint || digitsAfter > 0)
    }

    /// A date as the contract accepts it: RFC 3339 with a zone, or Unix seconds.
    /// The same rules as the donation JSON: Unix seconds in plain decimal notation (no hex floats, no `nan`), or
    /// RFC 3339 with a zone, within the years 0001 to 9999.
    static func date(_ text: String, option: String) throws(CommandError) -> Timestamp {
        guard let date = Timestamp(contractText: text) else {
            throw CommandError.usage(
                "\(option): '\(text.prefix(60))' is not a date; use RFC 3339 with a zone (2026-11-30T09:00:00Z) or Unix seconds")
        }
        guard Timestamp.acceptedRange.contains(date) else {
            throw CommandError.usage(
                "\(option): " + Timestamp.outOfRangeMessage("'\(text.prefix(60))'", seconds: Double(text)))
        }
        return date
    }

    /// `--at DATE`, or now.
    static func at(_ arguments: ParsedArguments) throws(CommandError) -> Timestamp {
        guard let text = arguments.value("--at") else { return .now() }
        return try date(text, option: "--at")
    }
}
