import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

@testable import SuggestCLI

/// A server's connections share one ranking mirror and one writing connection and report both at `/metrics`; a
/// command's connection has neither, and ranks from SQLite and commits on its own as it always did.
@Suite struct ServingOpenerTests {
    let directory: TemporaryDirectory
    let arguments: ParsedArguments
    let io: CommandIO

    init() throws {
        directory = try TemporaryDirectory("serving-opener")
        arguments = try ParsedArguments(
            command: "serve", arguments: ["--store", directory.path + "/store"], options: StoreOptions.all)
        io = CommandIO(
            standardOutput: CapturedOutput(), standardError: CapturedOutput(), standardInput: ByteSource(text: ""),
            environment: [:])
    }

    @Test func aCommandsConnectionHasNoMirror() throws {
        let store = try #require(try StoreOpening.opener(arguments, io: io)() as? SQLiteDonationStore)
        #expect(store.mirror == nil)
        #expect(store.groupCommit == nil)
        #expect(store.pageCacheKiB == 2_000)
    }

    @Test func theServersConnectionsShareOneMirrorAndOneWriterAndReportThem() throws {
        let serving = try StoreOpening.serving(arguments, io: io)
        let first = try #require(try serving.open() as? SQLiteDonationStore)
        let second = try #require(try serving.open() as? SQLiteDonationStore)
        let mirror = try #require(first.mirror)
        #expect(second.mirror === mirror)
        let writer = try #require(first.groupCommit)
        #expect(second.groupCommit === writer)
        // The writing connection has the large cache; these have SQLite's, but for a large batch's transaction.
        #expect(first.pageCacheKiB == StoreOpening.serverConnectionPageCacheKiB)
        #expect(first.largeImportCacheKiB == StoreOpening.serverPageCacheKiB)
        #expect(mirror.configuration == StoreOpening.serverMirror)

        _ = try first.record(
            Interaction(
                account: "default", identifier: "d1", date: Timestamp(seconds: 1_796_000_000), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c1")),
            now: Timestamp(seconds: 1_796_000_000))
        let context = RankingContext(at: Timestamp(seconds: 1_796_000_000))
        // Enough queries for a rebuild, which the server's periodic checkpoint runs.
        for _ in 0..<StoreOpening.serverMirror.readsBeforeRebuild { _ = try second.suggestions(account: "default", context: context) }
        try first.checkpoint()
        let list = try second.suggestions(account: "default", context: context)
        #expect(list.suggestions.map(\.conversationIdentifier) == ["c1"])
        let text = serving.metrics()
        #expect(text.contains("suggest_ranking_mirror_queries_total{result=\"hit\"} 1\n"))
        #expect(text.contains("suggest_ranking_mirror_queries_total{result=\"miss\"} \(StoreOpening.serverMirror.readsBeforeRebuild)\n"))
        #expect(text.contains("suggest_ranking_mirror_accounts 1\n"))
        #expect(text.contains("# TYPE suggest_ranking_mirror_bytes gauge\n"))
        #expect(text.contains("suggest_group_commit_pieces_total 1\n"))
        #expect(writer.statistics.pieces == 1)
    }
}
