import CSystem
import SuggestCore

/// Where the store lives: `--store DIR`, else `SUGGEST_STORE`, else `$XDG_DATA_HOME/suggest`, else
/// `~/.local/share/suggest` (the contract's order). The directory is like an App Group container: an app and its
/// share extension name the same one.
public struct StoreLocation: Sendable, Equatable {
    public var directory: String

    /// The database file inside the directory.
    public var databasePath: String { directory + "/suggest.sqlite" }

    public init(directory: String) { self.directory = directory }

    /// The environment variables `resolve(explicit:environment:)` reads, in its order.
    public static let environmentVariables = ["SUGGEST_STORE", "XDG_DATA_HOME", "HOME"]

    /// Resolves the directory from an explicit option and the environment.
    public static func resolve(explicit: String?, environment: [String: String]) -> StoreLocation {
        if let explicit, !explicit.isEmpty { return StoreLocation(directory: explicit) }
        if let fromEnvironment = environment["SUGGEST_STORE"], !fromEnvironment.isEmpty {
            return StoreLocation(directory: fromEnvironment)
        }
        if let dataHome = environment["XDG_DATA_HOME"], !dataHome.isEmpty {
            return StoreLocation(directory: dataHome + "/suggest")
        }
        let home = environment["HOME"] ?? "."
        return StoreLocation(directory: home + "/.local/share/suggest")
    }

    /// Refuses a database path that is a directory: SQLite would only say "unable to open database file".
    /// - Throws: `StoreError` naming the directory and what to do about it.
    public func checkDatabasePath() throws(StoreError) {
        var info = stat()
        guard stat(databasePath, &info) == 0, system_is_directory(info.st_mode) != 0 else { return }
        throw StoreError(
            .notAStore, "\(databasePath) is a directory, not a file; move it away or choose another --store")
    }

    /// Creates the directory and its parents if they are missing.
    /// - Throws: `StoreError` when a path component is a file or cannot be created.
    public func createDirectory() throws(StoreError) {
        // Every command but the first finds it there: one system call, not one per path component.
        var existing = stat()
        if stat(directory, &existing) == 0 && system_is_directory(existing.st_mode) != 0 { return }
        var path = ""
        for component in directory.split(separator: "/", omittingEmptySubsequences: false) {
            path += path.isEmpty && directory.hasPrefix("/") ? "/" + component : (path.isEmpty ? "" : "/") + component
            if path.isEmpty || path == "/" { continue }
            var info = stat()
            if stat(path, &info) == 0 {
                guard system_is_directory(info.st_mode) != 0 else {
                    throw StoreError(.notADirectory, "\(path) is a file, not a directory; --store names a directory")
                }
                continue
            }
            if mkdir(path, 0o700) != 0 && system_errno() != EEXIST {
                let reason = String(cString: strerror(system_errno()))
                throw StoreError(.readOnly, "cannot create the store directory \(path): \(reason)")
            }
        }
    }
}
