import CSystem

/// The words of the C library for an `errno` value: what every message about a failed system call ends with.
public enum ErrorNumber {
    /// The text of `code`, as `strerror` gives it.
    public static func describe(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }

    /// The text of the calling thread's `errno` now: read it right after the call that failed.
    public static func describeLast() -> String {
        describe(system_errno())
    }
}
