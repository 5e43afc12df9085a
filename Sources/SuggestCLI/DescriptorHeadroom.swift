import CSystem
import SuggestCore

/// Room for the descriptors a command's second thread will need. Reading its input on another thread starts
/// Dispatch's thread pool, whose event descriptors (an `epoll` and an `eventfd`) it cannot do without: where the
/// process may open no more files (`ulimit -n 8` and a store open), Dispatch stopped the process with an illegal
/// instruction and no word on standard error.
enum DescriptorHeadroom {
    /// What a pipelined read needs: Dispatch's two (the input and the store are open by the time it is asked).
    static let pipelinedRead = 2

    /// Throws when the process cannot open `count` more descriptors now.
    /// - Throws: `CommandError.failure` naming the limit.
    static func require(_ count: Int = pipelinedRead) throws(CommandError) {
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        for _ in 0..<count {
            let descriptor = system_open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                let number = system_errno()
                // Only the limit is this check's business; a system without /dev/null fails where it fails.
                guard number == EMFILE || number == ENFILE else { return }
                throw CommandError.failure(
                    "cannot start reading: too many files are open (\(ErrorNumber.describe(number))); raise the "
                        + "limit (ulimit -n) or close some")
            }
            opened.append(descriptor)
        }
    }
}
