import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore
import Synchronization

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
                // The first command after such an upgrade waits for it (4–7 s for a million donations on SQLite;
                // 34 s for 200k on a Redis Cluster), said first.
                let pace = store is RedisDonationStore ? "a few minutes" : "a few seconds"
                io.err(
                    "suggest: this version derives the ranking's state by a changed rule; rebuilding the store's "
                        + "state once, which may take \(pace) per million donations\n")
            }
            let report = try store.maintain(account: account, now: .now(), budget: .unbounded)
            if report.weightsRuleChanged {
                io.err(
                    "suggest: the store's learned weights were learned under another version's rule; each account's "
                        + "are folded again once, by the first command or server that uses it\n")
            }
        } catch let error as StoreError
            where error.kind == .busy || error.kind == .unavailable || error.kind == .diskFull
            || (reading && (error.kind == .misconfigured || error.kind == .readOnly))
        {
            // Upkeep that cannot be done this moment (another process holds the lock, a replica does not confirm, a
            // full disk or Redis node, where a deletion is what frees room) stays owed to the next command; this one
            // goes on, and fails on its own if it cannot do its work. A `list` failed while a Redis replica was
            // stalled, though reading needed nothing of it; and a user who may only read a store could not list it
            // once a new version had state to rebuild in it. Said, since until then what it shows may still hold
            // expired donations, or state of the version before.
            io.err("suggest: upkeep (expiry, rebuilding) could not run now and is left to a later command: \(error)\n")
        }
        if let warning = store.upkeepWarning { io.err("suggest: \(warning)\n") }
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

extension StoreOptions {
    /// The failure of a command whose deletion (`done`: "deleted", "unblocked X") left deleted bytes in the store's
    /// files that no later command can know of (`SQLiteDonationStore.cleanupLeftUnnoted`): said, and exit 1, as the
    /// Redis store says a rewrite it could not note. `nil` when the store noted what it owes, or owes nothing.
    /// First it waits for the reads that keep the store from settling it, as long as for a lock.
    static func unnotedCleanup(of store: any DonationStore, after done: String) -> CommandError? {
        guard let store = store as? SQLiteDonationStore, store.cleanupLeftUnnoted != nil,
            !store.settleUnnotedCleanup(waitingUpTo: .milliseconds(Int64(Database.busyTimeoutMilliseconds))),
            let reason = store.cleanupLeftUnnoted
        else { return nil }
        return .failure(
            "\(done), but what it removed stays in the store's files (another process was reading them, or the file "
                + "could not be rewritten), and no later command can know it: \(reason) (the note a deletion leaves "
                + "for the next command); let this user create files in the store's directory: the next deletion that "
                + "deletes something then removes them too")
    }
}
