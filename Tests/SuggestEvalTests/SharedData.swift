#if canImport(Glibc)
    import Glibc
#endif
import SuggestCore
import SuggestEval

/// The public histories in /work/shared/data, when this machine has them, and the switches for the runs that use
/// them. Those runs are off by default; set the variable to run one, in release mode:
///
///     SUGGEST_TUNE=1 swift test -c release --filter Tuning
///     SUGGEST_FIGURES=1 swift test -c release --filter Figures
///     SUGGEST_SPEED=1 swift test -c release --filter Speed
enum SharedData {
    static let root = "/work/shared/data"
    static let collegeMsg = root + "/collegemsg/CollegeMsg.txt"
    static let enron = root + "/enron-perry-wolfe"

    static func isSet(_ variable: String) -> Bool { getenv(variable) != nil }
    static var isPresent: Bool { access(collegeMsg, R_OK) == 0 && access(enron + "/messages.tsv", R_OK) == 0 }

    static func collegeMsgHistory() throws -> [Interaction] {
        var history: [Interaction] = []
        try HistoryConverter.collegeMsg(.file(collegeMsg)) { history.append($0) }
        return history
    }

    static func enronHistory() throws -> [Interaction] {
        var history: [Interaction] = []
        try HistoryConverter.enron(directory: enron) { history.append($0) }
        return history
    }
}
