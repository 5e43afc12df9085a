import CSystem
import SuggestCore

/// A file beside the database (`suggest.sqlite-import`) that says an import's transaction goes on: the import makes
/// it with its process's id when its transaction begins, moves its time on about every second, and removes it at
/// its end. A writer of another process that has waited the busy timeout for the lock waits again while the marker
/// is young and its process alive (`Database.beginWriting()`): an import is one transaction, and one of millions of
/// donations holds the lock for longer than the timeout.
///
/// Only the lock holder writes it, so no two live imports share it. A marker whose process is gone (killed, or
/// ended by a signal before its `defer` ran) is no one's, and says nothing.
struct ImportMarker: Sendable {
    let path: String
    private let databasePath: String

    init(databasePath: String) {
        self.databasePath = databasePath
        path = databasePath + "-import"
    }

    /// How long an import may stand still and still be waited for.
    static let standstill = 10.0

    /// Makes the marker afresh with this process's id, in the database file's mode (so that another user of a store
    /// shared with a group replaces it in turn), never through a link.
    func begin() {
        var database = stat()
        let mode = stat(databasePath, &database) == 0 ? database.st_mode & 0o666 : 0o600
        unlink(path)
        let descriptor = system_open_creating(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { return }
        _ = fchmod(descriptor, mode)
        let text = Array(String(getpid()).utf8)
        _ = text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    /// Moves the marker's time on; makes it again when it is gone.
    func noteGoesOn() {
        if utimensat(AT_FDCWD, path, nil, AT_SYMLINK_NOFOLLOW) != 0 { begin() }
    }

    /// Removes the marker, when it is this process's.
    func end() {
        if owner == getpid() { unlink(path) }
    }

    /// The process whose import made the marker, `nil` without a readable one.
    private var owner: pid_t? {
        let descriptor = system_open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 20)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return pid_t(String(decoding: bytes[..<count], as: UTF8.self))
    }

    /// How many seconds ago the import of a live process last went on, by the marker's time; `nil` without a marker,
    /// or with one whose process is gone.
    var secondsSinceWentOn: Double? {
        var info = stat()
        guard lstat(path, &info) == 0, let owner, kill(owner, 0) == 0 || system_errno() != ESRCH else { return nil }
        return Timestamp.now().seconds - (Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    /// Whether an import of a live process went on within `standstill` (a marker dated ahead, by a clock set back
    /// since, counts only as near).
    var goesOn: Bool { secondsSinceWentOn.map { abs($0) < Self.standstill } ?? false }
}
