#if canImport(Glibc)
    import Glibc
#endif
import SuggestCore
import SuggestEval
import Testing

/// How fast a replay of one million donations is, in release mode. The history is CollegeMsg laid end to end
/// about 8.4 times (each copy 200 days after the previous one, in the same accounts), so every account's history
/// is 8 times longer than in the original. Off by default; run with
/// `SUGGEST_SPEED=1 swift test -c release --filter SpeedRun`.
@Suite(.enabled(if: SharedData.isSet("SUGGEST_SPEED") && SharedData.isPresent), .serialized)
struct SpeedRun {
    static let size = 1_000_000

    static func millionDonations() throws -> [Interaction] {
        let original = try SharedData.collegeMsgHistory()
        var history: [Interaction] = []
        history.reserveCapacity(size)
        var copy = 0
        while history.count < size {
            for var donation in original where history.count < size {
                donation.date = donation.date.adding(Double(copy) * 200 * 86_400)
                donation.identifier = "\(copy)-" + (donation.identifier ?? "")
                history.append(donation)
            }
            copy += 1
        }
        return history
    }

    @Test func replayInMemory() throws {
        let history = try Self.millionDonations()
        let clock = ContinuousClock()
        for policy in RankingPolicy.all {
            let start = clock.now
            let evaluator = try Evaluator(policy: policy)
            for donation in history { try evaluator.consume(donation) }
            let elapsed = clock.now - start
            print("in memory, \(policy.name): \(elapsed) for \(evaluator.result.donations) donations, mrr \(evaluator.result.mrr)")
        }
    }

    @Test func replayFromJSONLines() async throws {
        let path = "/tmp/suggest-million.jsonl"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        let output = JSONLinesOutput(fileDescriptor: descriptor, name: path)
        for donation in try Self.millionDonations() { try output.write(donation) }
        try output.flush()
        close(descriptor)
        let clock = ContinuousClock()
        var start = clock.now
        var lines = 0
        try LineReader.forEachLine(in: .file(path)) { bytes, line in
            if try Evaluator.interaction(jsonLine: bytes, line: line) != nil { lines += 1 }
        }
        print("parse only: \(clock.now - start) for \(lines) lines")
        start = clock.now
        let result = try Evaluator.evaluate(jsonLinesAt: path, policy: .default)
        print("suggest eval path, default: \(clock.now - start) for \(result.donations) donations")
        start = clock.now
        let pipelined = try Evaluator.evaluatePipelined(.file(path), policies: [.default])
        print("pipelined, default: \(clock.now - start)")
        #expect(pipelined == [result])
        unlink(path)
    }
}
