/// Why a store cannot do what was asked, in the words of the library: what is wrong, and what can be done about it
/// without naming any command-line flag (front ends add their own, by `kind`).
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in the few classes a front end maps to its exit codes, HTTP statuses and advice.
    public enum Kind: Sendable, Equatable {
        /// Reading a store that does not exist (a read never creates one).
        case noSuchStore
        /// A path that must be a directory is a file.
        case notADirectory
        /// The file is not a suggest store, or is damaged.
        case notAStore
        /// The file is another application's SQLite database.
        case foreignDatabase
        /// The store was written by a newer suggest.
        case newerSchema
        /// The store cannot be written: permissions, a read-only file system.
        case readOnly
        /// The disk (or the server's memory) is full; nothing was changed.
        case diskFull
        /// Another process held the store's lock too long.
        case busy
        /// The store's server cannot be reached, or refused the credentials.
        case unavailable
        /// The store's server is configured so that it cannot keep the store's promises (durability).
        case misconfigured
        /// Anything else the store reported.
        case failed
    }

    /// The class of the failure, for a front end to choose its exit code, status and advice by.
    public var kind: Kind
    /// One line: what is wrong and, where the library knows, what to do.
    public var message: String
    /// Whether the write may have been made all the same (its store's reply was lost, and it could not be taken
    /// back): a server must not tell its client that nothing was recorded.
    public var mayHaveBeenRecorded = false

    /// - Parameters:
    ///   - kind: the class of the failure.
    ///   - message: one line: what is wrong and, where the library knows, what to do; no command-line flag.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// Whether this is a write past the process's limit on file size (`ulimit -f`, a unit's `LimitFSIZE`): room run
    /// out (`diskFull`) as a full disk is, but not a full disk, which front ends word apart.
    public private(set) var isFileSizeLimit = false

    /// Whether a deletion left deleted bytes in the store's files and could not note the rewrite they are owed, so
    /// that nothing will remove them: said even where the rest of the operation reports no failure (an unblock).
    public package(set) var leftDeletedBytesUnnoted = false

    /// How a store's message, and a front end's, names the process's limit on file size.
    public static let fileSizeLimitWords = "a limit on file size"

    /// A write past the process's limit on file size: `diskFull`, told apart by `isFileSizeLimit`.
    public static func fileSizeLimit(_ message: String) -> StoreError {
        var error = StoreError(.diskFull, message)
        error.isFileSizeLimit = true
        return error
    }

    /// The error for a damaged part of a store's data.
    public static func damaged(_ what: String) -> StoreError {
        StoreError(.notAStore, "\(what) is damaged; the store needs repair (export what can be read and import it into a new store)")
    }
}
