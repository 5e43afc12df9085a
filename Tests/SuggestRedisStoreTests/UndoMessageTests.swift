import RedisCluster
import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestRedisStore

/// What a write that failed says once it was taken back (`undoingOnFailure`).
@Suite struct UndoMessageTests {
    /// A connection lost under a write that was then taken back said both "retry it only if running it twice is
    /// harmless" and "it was taken back: retry it" (a sweep read it in a 503's log line): once the undo is known,
    /// the lost connection's own advice goes.
    @Test func aWriteTakenBackAfterALostConnectionGivesOneAdvice() throws {
        let store = try RedisDonationStore.open(url: try LocalRedisCluster.shared("write-lease").url)
        let lost = RedisError.connectionLost(
            RedisEndpoint(host: "127.0.0.1", port: 7000), reason: "reset by peer", mayHaveRun: true)
        #expect(lost.description.hasSuffix(RedisError.mayHaveRunAdvice))
        let refused = #expect(throws: StoreError.self) {
            try store.undoingOnFailure(leftover: "it may have stayed", undone: "it was taken back: retry it") { _ in
                throw lost
            }
        }
        #expect(
            refused?.message
                == "lost the connection to Redis at 127.0.0.1:7000 (reset by peer); it was taken back: retry it",
            "\(String(describing: refused))")
    }
}
