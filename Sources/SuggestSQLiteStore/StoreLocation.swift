import CSystem
import SuggestCore

/// Where the store lives: `--store DIR`, else `SUGGEST_STORE`, else `$XDG_DATA_HOME/suggest`, else
/// `~/.local/share/suggest` (the contract's order). The directory is like an App Group container: an app and its
/// share extension name the same one.
public struct StoreLocation: Sendable, Equatable {
    /// Where the directory's name came from, which decides what may be created for it.
    public enum Origin: Sendable, Equatable {
        /// Named by the caller (`--store DIR`, or the library's own `init(directory:)`).
        case explicit
        /// `SUGGEST_STORE`.
        case storeVariable
        /// `$XDG_DATA_HOME/suggest`.
        case dataHome
        /// `$HOME/.local/share/suggest`.
        case home
    }

    /// The directory, without repeated or trailing slashes.
    public var directory: String
    /// Where the directory's name came from.
    public var origin: Origin

    /// The database file inside the directory.
    public var databasePath: String { (directory == "/" ? "" : directory) + "/suggest.sqlite" }

    /// - Parameters:
    ///   - directory: the store's directory; repeated and trailing slashes are dropped.
    ///   - origin: where its name came from (`.explicit` for a library caller's own directory).
    public init(directory: String, origin: Origin = .explicit) {
        self.directory = Self.normalized(directory)
        self.origin = origin
    }

    /// The environment variables `resolve(explicit:environment:)` reads, in its order.
    public static let environmentVariables = ["SUGGEST_STORE", "XDG_DATA_HOME", "HOME"]

    /// The environment variable the directory came from, if one did.
    public var variable: String? {
        switch origin {
        case .explicit: return nil
        case .storeVariable: return "SUGGEST_STORE"
        case .dataHome: return "XDG_DATA_HOME"
        case .home: return "HOME"
        }
    }

    /// Why no store directory can be named: a usage error, one line that says what to do.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong and what to do, on one line.
        public var message: String
        /// - Parameter message: what is wrong and what to do, on one line.
        public init(_ message: String) { self.message = message }
        /// The message.
        public var description: String { message }
    }

    /// Resolves the directory from an explicit option and the environment.
    ///
    /// An empty `--store` or `SUGGEST_STORE` is refused, never taken for "the default". As the XDG Base Directory
    /// specification says, an `XDG_DATA_HOME` that is empty or relative is ignored; without it, `HOME` must be an
    /// absolute path (an unset `HOME` once put the store in `./.local/share/suggest`, wherever the command ran).
    /// - Throws: `Problem` when the options and the environment name no usable directory.
    public static func resolve(explicit: String?, environment: [String: String]) throws(Problem) -> StoreLocation {
        if let explicit {
            guard !explicit.isEmpty else {
                throw Problem(
                    "--store is empty; give the store's directory, or leave --store out for the default store")
            }
            return StoreLocation(directory: explicit, origin: .explicit)
        }
        if let fromEnvironment = environment["SUGGEST_STORE"] {
            guard !fromEnvironment.isEmpty else {
                throw Problem(
                    "SUGGEST_STORE is set but empty; set it to the store's directory, or unset it for the default store"
                )
            }
            return StoreLocation(directory: fromEnvironment, origin: .storeVariable)
        }
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return StoreLocation(directory: dataHome + "/suggest", origin: .dataHome)
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            let state =
                environment["HOME"].map { $0.isEmpty ? "empty" : "not an absolute path ('\($0.prefix(60))')" }
                ?? "not set"
            throw Problem(
                "HOME is \(state) and XDG_DATA_HOME names no absolute directory, so there is no default store; "
                    + "give --store DIR or set SUGGEST_STORE")
        }
        return StoreLocation(directory: home + "/.local/share/suggest", origin: .home)
    }

    /// `path` without repeated slashes and without a trailing one (`/tmp//a/` is `/tmp/a`), so that messages and the
    /// database path never read `//tmp/…`.
    static func normalized(_ path: String) -> String {
        guard path.utf8.contains(UInt8(ascii: "/")) else { return path }
        var result = ""
        var previousWasSlash = false
        for scalar in path.unicodeScalars {
            let isSlash = scalar == "/"
            if isSlash && previousWasSlash { continue }
            result.unicodeScalars.append(scalar)
            previousWasSlash = isSlash
        }
        if result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }

    /// Whether the directory holds a store's database file.
    public var exists: Bool {
        var info = stat()
        return stat(databasePath, &info) == 0
    }

    /// Makes an empty database file readable and writable by its owner only, unless one is there already (another
    /// process made it first).
    /// - Returns: the file's inode when this call made it, else `nil`.
    func makePrivateDatabaseFile() -> ino_t? {
        let descriptor = system_open_creating(databasePath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        return fstat(descriptor, &info) == 0 ? info.st_ino : nil
    }

    /// Gives the database file's log and index (`-wal`, `-shm`) the database file's mode, where they are this
    /// process's, of the database file's group, and have another mode. SQLite gives them that mode when it makes
    /// them, but they stay between commands: a store shared with a group afterwards (its database file made 0660)
    /// kept a log of 0600, and the group's first command failed ("not readable and writable by this user").
    ///
    /// Neither file is opened: closing a descriptor of a file drops every POSIX lock the process holds on it, and
    /// SQLite's connections in this process hold theirs on the index (dropped, they let other processes take the
    /// index for unused and reset it under them: `locking protocol` errors and SIGBUS). A link
    /// planted in the directory is not followed, and a file with another link is left alone.
    func alignLogModes() {
        var database = stat()
        guard stat(databasePath, &database) == 0 else { return }
        let mode = database.st_mode & 0o777
        for path in [databasePath + "-wal", databasePath + "-shm"] {
            var info = stat()
            guard lstat(path, &info) == 0, system_is_regular_file(info.st_mode) != 0, info.st_nlink == 1,
                info.st_uid == geteuid(), info.st_gid == database.st_gid, info.st_mode & 0o777 != mode
            else { continue }
            _ = system_change_mode_not_following(path, mode)
        }
    }

    /// Refuses to open a store that is not there, for commands that only read (or remove) what a store holds: reading
    /// a missing store is not a reason to create an empty one (a mistyped `--store` would leave a stray directory
    /// behind and show an empty list as if it were the truth).
    /// - Throws: `StoreError` saying that there is no such store and how to make one, or what the path is instead
    ///   (a link to nowhere, a file); or why the store could not be looked at (an I/O error, permissions).
    public func checkExists() throws(StoreError) {
        var info = stat()
        guard stat(databasePath, &info) != 0 else {
            // An empty file with no log beside it holds no store either (a first write killed before it wrote, a
            // copy cut short): opened, SQLite would take it for a new database, and a `list` made a whole store.
            // (A store's first commit may sit in its log while the file is still empty: that is a store.)
            var log = stat()
            guard info.st_size == 0, system_is_regular_file(info.st_mode) != 0,
                stat(databasePath + "-wal", &log) != 0 || log.st_size == 0
            else { return }
            throw StoreError(
                .noSuchStore,
                "no such store: \(directory) holds an empty suggest.sqlite, no store; record a donation first")
        }
        // Only a path that names nothing is no store: an I/O error said "no such store ... record a donation first".
        let number = system_errno()
        // (A loop of links, or a path too long, is said as such below.)
        guard ErrorNumber.meansAbsent(number) || number == ELOOP || number == ENAMETOOLONG else {
            throw StoreError(
                number == EACCES || number == EPERM ? .readOnly : .failed,
                "cannot read the store at \(directory): \(ErrorNumber.describe(number))")
        }
        try checkNotADanglingLink()
        try checkIsDirectoryIfPresent()
        throw StoreError(.noSuchStore, "no such store: \(directory) holds no suggest store; record a donation first")
    }

    /// Refuses a database path that is a directory: SQLite would only say "unable to open database file".
    /// - Throws: `StoreError` naming the directory and what to do about it.
    public func checkDatabasePath() throws(StoreError) {
        var info = stat()
        guard stat(databasePath, &info) == 0, system_is_directory(info.st_mode) != 0 else { return }
        throw StoreError(.notAStore, "\(databasePath) is a directory, not a file")
    }

    /// Refuses a store directory that is a symbolic link to nothing: SQLite would only say "unable to open database
    /// file", and `mkdir` cannot make it.
    private func checkNotADanglingLink() throws(StoreError) {
        var info = stat()
        let resolves = stat(directory, &info) == 0
        let looped = !resolves && system_errno() == ELOOP
        guard !resolves, lstat(directory, &info) == 0, system_is_symbolic_link(info.st_mode) != 0 else { return }
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink(directory, &target, target.count - 1)
        let named = length > 0 ? String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        // The command line adds where else to look ("move it away or choose another --store").
        throw StoreError(
            .notADirectory,
            looped
                ? "\(directory) is a symbolic link to \(named), whose links lead back to themselves: point it at a directory"
                : "\(directory) is a symbolic link to \(named), which does not exist: create that directory")
    }

    /// Refuses a directory path that names a file, or lies below one.
    private func checkIsDirectoryIfPresent() throws(StoreError) {
        // The nearest part of the path that exists: the directory itself, or the file a parent turned out to be.
        var path = directory
        var info = stat()
        while stat(path, &info) != 0 {
            let parent = Self.parent(of: path)
            guard parent != path else { return }
            path = parent
        }
        guard system_is_directory(info.st_mode) == 0 else { return }
        throw StoreError(.notADirectory, "\(path) is a file, not a directory")
    }

    /// Creates the directory if it is missing.
    ///
    /// Only the store's own directory is created for a directory the caller named (`--store`, `SUGGEST_STORE`): a
    /// mistyped parent is an error, not a tree of new directories (as root, `--store /nonexistent/a/b` made
    /// `/nonexistent`). For the default location, the XDG specification asks for the missing directories to be made,
    /// mode 0700: those below `HOME` (which must exist), or `XDG_DATA_HOME` and `suggest` in it (its parent must).
    /// - Throws: `StoreError` when a path component is a file, a parent is missing, or a directory cannot be created.
    public func createDirectory() throws(StoreError) {
        for path in try directoriesToMake() where mkdir(path, 0o700) != 0 && system_errno() != EEXIST {
            let number = system_errno()
            // What the failure was, so that an app can tell a full disk or a parent removed meanwhile from a
            // directory it may not write in.
            let kind: StoreError.Kind =
                switch number {
                case EACCES, EPERM, EROFS: .readOnly
                case ENOSPC, EDQUOT: .diskFull
                case ENOENT: .noSuchStore
                default: .failed
                }
            throw StoreError(kind, "cannot create the store directory \(path): \(ErrorNumber.describe(number))")
        }
    }

    /// Refuses, as `createDirectory()` would, a directory it could not make (a parent missing, a file in the way),
    /// making nothing: for a caller that reads its input before it creates a store, and must not read it first
    /// only to fail then for a mistyped parent.
    public func checkCreatable() throws(StoreError) { _ = try directoriesToMake() }

    /// The directories `createDirectory()` makes, outermost first (none when the directory is there).
    private func directoriesToMake() throws(StoreError) -> [String] {
        // Every command but the first finds it there: one system call, not one per path component.
        var existing = stat()
        if stat(directory, &existing) == 0 {
            guard system_is_directory(existing.st_mode) != 0 else {
                throw StoreError(.notADirectory, "\(directory) is a file, not a directory")
            }
            return []
        }
        try checkNotADanglingLink()
        // The directories to make, outermost first: the store's own, and for the default location those below its
        // base directory.
        var missing = [directory]
        let base: String? =
            switch origin {
            case .explicit, .storeVariable: nil
            case .dataHome: Self.parent(of: Self.parent(of: directory))
            case .home: Self.parent(of: Self.parent(of: Self.parent(of: directory)))
            }
        var parent = Self.parent(of: directory)
        while let base, parent != base, !Self.isDirectory(parent) {
            missing.insert(parent, at: 0)
            parent = Self.parent(of: parent)
        }
        guard Self.isDirectory(parent) else {
            var info = stat()
            if stat(parent, &info) == 0 {
                throw StoreError(.notADirectory, "\(parent) is a file, not a directory")
            }
            let from = variable.map { " (from \($0))" } ?? ""
            // The kind of a parent removed while the directory is made (below): one cause, one kind to act on.
            throw StoreError(
                .noSuchStore,
                "cannot create the store directory \(directory)\(from): \(parent) does not exist; create it first")
        }
        return missing
    }

    /// The directory holding `path` (`/` for `/a`, `.` for `a`).
    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && system_is_directory(info.st_mode) != 0
    }
}
