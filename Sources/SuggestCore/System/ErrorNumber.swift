import CSystem

/// The words of the C library for an `errno` value: what every message about a failed system call ends with.
public enum ErrorNumber {
    /// The text of `code`, as `strerror` gives it.
    public static func describe(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }

    /// Whether a file that could not be opened with `code` is the path's fault, the user's to correct (a usage
    /// error, exit 64): it names nothing this process may read. Otherwise the system failed (no descriptor or
    /// memory left, a failing disk: exit 1). The one rule for every command that opens a file it was given.
    public static func blamesThePath(_ code: Int32) -> Bool {
        [ENOENT, EACCES, EPERM, ENOTDIR, ELOOP, ENAMETOOLONG, ENXIO, ENODEV].contains(code)
    }

    /// Whether a `stat` or `open` that failed with `code` found nothing at the path (no such file, or a part of it
    /// that is not a directory), rather than failing to look (an I/O error, no memory, no permission).
    public static func meansAbsent(_ code: Int32) -> Bool { code == ENOENT || code == ENOTDIR }

    /// The text of the calling thread's `errno` now: read it right after the call that failed.
    public static func describeLast() -> String {
        describe(system_errno())
    }
}
