import SuggestCore
import SuggestTestSupport
import Testing

extension RedisStoreTests {
    /// Two `suggest serve` processes and the command line on one cluster see each other's writes at once: nothing is
    /// cached between a write and the next read of another process (no sleep between them here).
    @Test func twoServersAndTheCommandLineSeeEachOthersWrites() throws {
        let cluster = try LocalRedisCluster.shared("store-files")
        let scratch = try TemporaryDirectory("two-servers")
        let first = try ServeProcess(["--store", cluster.url, "--no-access-log"], scratch: scratch.path)
        let second = try ServeProcess(["--store", cluster.url, "--no-access-log"], scratch: scratch.path)
        let account = "two-servers"
        let path = "/v1/accounts/\(account)"

        func donation(_ identifier: String, _ conversation: String, ago seconds: Double) -> String {
            let date = Timestamp.now().adding(-seconds)
            return #"{"identifier":"\#(identifier)","date":"\#(date)","direction":"outgoing","#
                + #""intent":{"conversationIdentifier":"\#(conversation)"}}"#
        }
        func listed(_ server: ServeProcess) throws -> String {
            let reply = try server.client.request("GET", path + "/suggestions?limit=8")
            try #require(reply.status == 200, "GET suggestions: \(reply)")
            return reply.text
        }

        let one = try first.client.send("POST", path + "/donations", json: donation("d1", "c-one", ago: 120))
        try #require(one.status == 201, "POST through the first server: \(one)")
        #expect(try listed(second).contains(#""conversationIdentifier":"c-one""#))

        let two = try second.client.send("POST", path + "/donations", json: donation("d2", "c-two", ago: 60))
        try #require(two.status == 201, "POST through the second server: \(two)")
        let seenByFirst = try listed(first)
        #expect(seenByFirst.contains(#""conversationIdentifier":"c-two""#))
        #expect(seenByFirst.contains(#""conversationIdentifier":"c-one""#))

        let list = try Suggest.run(
            ["list", "--store", cluster.url, "--account", account, "--json"], scratch: scratch.path)
        #expect(list.status == 0, "\(list)")
        #expect(list.output.contains(#""conversationIdentifier":"c-one""#))
        #expect(list.output.contains(#""conversationIdentifier":"c-two""#))

        let donate = try Suggest.run(
            ["donate", "--store", cluster.url, "--account", account, "--conversation", "c-three", "--identifier", "d3"],
            scratch: scratch.path)
        #expect(donate.status == 0, "\(donate)")
        for server in [first, second] {
            let text = try listed(server)
            // Donated now, c-three is the freshest of the three.
            let three = text.firstRange(of: #""conversationIdentifier":"c-three""#)
            let two = text.firstRange(of: #""conversationIdentifier":"c-two""#)
            try #require(three != nil && two != nil, "\(text)")
            #expect(three?.lowerBound ?? text.endIndex < two?.lowerBound ?? text.startIndex, "\(text)")
        }
        // Each server's export (sent as its client reads it) is the command line's, bytes and all.
        let export = try Suggest.run(["export", "--store", cluster.url, "--account", account], scratch: scratch.path)
        #expect(export.status == 0 && export.output.split(separator: "\n").count == 3, "\(export)")
        for server in [first, second] {
            let reply = try server.client.request("GET", path + "/donations")
            #expect(reply.status == 200 && reply.text == export.output, "\(reply)")
        }
        // How the servers' writes met other writers, for an operator (none lost here).
        let metrics = try first.client.request("GET", "/metrics")
        #expect(metrics.text.contains("suggest_store_write_retries_total{reason=\"conflict\"} 0\n"), "\(metrics)")
        #expect(metrics.text.contains("# TYPE suggest_store_write_leases_total counter\n"), "\(metrics)")
        #expect(metrics.text.contains("suggest_store_write_lease_wait_seconds_total 0.0\n"), "\(metrics)")
        #expect(first.stop().status == 0)
        #expect(second.stop().status == 0)
    }
}
