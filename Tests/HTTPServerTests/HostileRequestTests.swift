import HTTPServer
import SuggestTestSupport
import Testing

/// Malformed requests, connection limits and clients that stop halfway: the server answers or closes, and goes on
/// serving everyone else.
@Suite struct HostileRequestTests {
    /// Requests MHD refuses, with the statuses it may answer; for a request line it cannot split into three
    /// parts MHD closes the connection without a word, which is as good.
    @Test(
        arguments: [
            ("GARBAGE\r\n\r\n", 400...499, true),
            ("GET\r\n\r\n", 400...499, true),
            ("GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n", 400...400, false),
            ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400...400, false),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400...400, false),
            ("GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505...505, false),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + String(repeating: "a", count: 70_000) + "\r\n\r\n", 431...431,
                false
            ),
            ("GET /" + String(repeating: "a", count: 70_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414...414, false),
        ] as [(String, ClosedRange<Int>, Bool)])
    func aMalformedRequestIsRefusedByMHDAndTheServerGoesOn(
        request: String, statuses: ClosedRange<Int>, mayCloseSilently: Bool
    ) throws {
        let calls = CallCounter()
        try withServer(handler: counting(calls)) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send(request)
            if mayCloseSilently && connection.closesWithoutData(within: 3) {
                // Closed, unanswered: allowed for this one.
            } else {
                connection.setTimeout(5)
                let response = try connection.readResponse()
                #expect(statuses.contains(response.status), "\(response.status) for \(request.prefix(60))")
            }
            #expect(calls.count == 0)
            let next = try TestConnection.connected(port: server.address.port)
            #expect(try next.exchange("GET /fine HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            #expect(calls.count == 1)
        }
    }

    @Test func bytesThatAreNotHTTPAtAllGetTheConnectionClosed() throws {
        try withServer(handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send(randomBytes(5000, seed: 0xBAD) + [13, 10, 13, 10])
            // Either a 4xx or a plain close; never a 2xx, never a hang.
            if let response = try? connection.readResponse() {
                #expect((400..<500).contains(response.status))
            }
            let next = try TestConnection.connected(port: server.address.port)
            #expect(try next.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
        }
    }

    @Test func theConnectionLimitHolds() throws {
        // One thread, so that the whole limit is that thread's.
        let configuration = testConfiguration(workerThreads: 1, connectionLimit: 2)
        try withServer(configuration, handler: echoHandler) { server in
            let port = server.address.port
            let first = try TestConnection.connected(port: port)
            #expect(try first.exchange("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            let second = try TestConnection.connected(port: port)
            #expect(try second.exchange("GET /2 HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            // The kernel completes the handshake, but the server does not accept a third connection: its request
            // waits unanswered while the other two are open.
            let third = try TestConnection.connected(port: port)
            try third.send("GET /3 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(third.staysSilent(for: 0.7))
            third.setTimeout(5)
            // One closes: the third is accepted and answered.
            first.close()
            let answer = try third.readResponse()
            #expect(answer.status == 200)
            #expect(echoed("path", in: answer) == ["/3"])
            second.close()
        }
    }

    @Test func thePerAddressLimitHolds() throws {
        let log = LogLines()
        let configuration = testConfiguration(connectionLimit: 64, perIPConnectionLimit: 2)
        try withServer(configuration, log: log, handler: echoHandler) { server in
            let port = server.address.port
            let first = try TestConnection.connected(port: port)
            #expect(try first.exchange("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            let second = try TestConnection.connected(port: port)
            #expect(try second.exchange("GET /2 HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            // A third from the same address is accepted and closed at once, unanswered.
            let third = try TestConnection.connected(port: port)
            try? third.send("GET /3 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(third.closesWithoutData(within: 3))
            #expect(log.contains("connection limit"))
            // Once one of the two closes, a new one is served.
            first.close()
            #expect(eventually { server.requestsInFlight == 0 })
            var served = false
            for _ in 0..<500 where !served {
                let next = try TestConnection.connected(port: port)
                served = (try? next.exchange("GET /4 HTTP/1.1\r\nHost: x\r\n\r\n"))?.status == 200
                if !served { sleepSeconds(0.02) }
            }
            #expect(served)
            second.close()
        }
    }

    /// A head that the connection's memory cannot hold (a thousand header lines, each a record of its own) is given
    /// up by libmicrohttpd before the handler sees it, without its completion callback: the request still leaves
    /// the count in flight when its connection closes, so that a drain does not wait its whole grace for it.
    @Test func aRequestGivenUpBeforeItsHandlerLeavesNothingInFlight() throws {
        try withServer(testConfiguration(), handler: echoHandler) { server in
            let port = server.address.port
            for _ in 0..<3 {
                let crowded = try TestConnection.connected(port: port)
                let fields = String(repeating: "X-A: b\r\n", count: 2_000)
                try? crowded.send("GET /v1/version HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")
                _ = crowded.closesWithoutData(within: 0.5)
                crowded.close()
            }
            #expect(eventually { server.requestsInFlight == 0 }, "\(server.requestsInFlight) in flight")
            let next = try TestConnection.connected(port: port)
            #expect(try next.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
        }
    }

    /// A thousand query items in a 3 KB target reach the handler, whole and at once. MHD listed each in the
    /// connection's memory, ran out of it, and could not send its own 431 either: the client waited for the
    /// connection's timeout, unanswered. The server reads the query from the target itself.
    @Test func aThousandQueryItemsAreTheHandlersToJudge() throws {
        try withServer(testConfiguration(), handler: echoHandler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            connection.setTimeout(3)
            let items = (0..<1_500).map { "a\($0)=\($0)" }.joined(separator: "&")
            let response = try connection.exchange("GET /v1/version?\(items) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(response.status == 200)
            #expect(echoed("item", in: response).count == 1_500)
            #expect(echoed("item", in: response).last == "[a1499]=[1499]")
            #expect(echoed("path", in: response) == ["/v1/version"])
            // The same behind a byte 0, which MHD looked past for the `?`: refused at once (the NUL), not left
            // unanswered (the review).
            let cut = try TestConnection.connected(port: server.address.port)
            cut.setTimeout(3)
            let refused = try cut.exchange("GET /v1/version\u{0}?\(items) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(refused.status == 400 && refused.text.contains("invalid_target"), "\(refused.status)")
        }
    }

    /// A byte 0 in the request line is refused, wherever it is: MHD passed the method and the target as C strings,
    /// cut at it, so `DELETE .../conversations/c1<NUL>/block` reached the route that deletes conversation `c1`,
    /// `/v1/accounts/team<NUL>/...` the deletion of the account, and `DELETE<NUL>junk` (a method a proxy in front
    /// does not know) a `DELETE`. A line without one is read whole, also with several spaces before its target.
    @Test(arguments: [
        "DELETE /v1/accounts/team/conversations/c1\u{0}/block", "DELETE /v1/accounts/team\u{0}/conversations/c2",
        "GET /a?limit=1\u{0}&bogus=1", "DELETE /a\u{0}", "DELETE /\u{0}\u{0}x", "DELETE\u{0}junk /v1/accounts/team",
        "DELETE\u{0} /a", "DELETE \u{0}/a",
    ])
    func aNULInTheRequestLineIsRefused(line: String) throws {
        let calls = CallCounter()
        try withServer(handler: counting(calls)) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            connection.setTimeout(5)
            let response = try connection.exchange("\(line) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(response.status == 400, "\(line.debugDescription)")
            #expect(response.text.contains("invalid_target"), "\(response.text)")
            #expect(calls.count == 0)
            for (sent, target) in [("GET /fine?x=1", "/fine?x=1"), ("GET    /fine?y=2", "/fine?y=2")] {
                let next = try TestConnection.connected(port: server.address.port)
                let whole = try next.exchange("\(sent) HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(whole.status == 200 && echoed("target", in: whole) == [target], "\(sent)")
                #expect(echoed("method", in: whole) == ["GET"])
            }
            #expect(calls.count == 2)
        }
    }

    /// Sends `piece` every `interval` seconds until the server closes the connection, for 10 s at most.
    /// - Returns: whether it closed, and after how many seconds.
    static func trickle(_ connection: TestConnection, _ piece: String, every interval: Double) -> (closed: Bool, elapsed: Double) {
        let started = monotonicSeconds()
        var closed = false
        while !closed && monotonicSeconds() - started < 10 {
            do { try connection.send(piece) } catch { closed = true }
            if connection.closesWithoutData(within: interval) { closed = true }
        }
        return (closed, monotonicSeconds() - started)
    }

    /// A slowloris that trickles its head a header line at a time: libmicrohttpd's timeout starts again at every
    /// byte, so such a connection was kept for ever (1,024 of them made the server unreachable). A whole head must
    /// now arrive within the timeout of the connection's opening, or of its previous request's end; a kept-alive
    /// connection that sends quick requests for longer than that in all is not cut.
    @Test func aClientTricklingItsHeadIsClosedAfterTheTimeout() throws {
        let configuration = testConfiguration(connectionTimeout: .seconds(2))
        try withServer(configuration, handler: echoHandler) { server in
            let port = server.address.port
            let trickler = try TestConnection.connected(port: port)
            try trickler.send("GET / HTTP/1.1\r\nHost: x\r\n")
            // A line every 0.4 s: never idle long enough for the idle timeout.
            let (closed, elapsed) = Self.trickle(trickler, "X-Slow: 1\r\n", every: 0.4)
            #expect(closed, "a connection trickling its head was still open after \(elapsed) s")
            #expect(elapsed >= 1.5, "closed after \(elapsed) s, before the 2 s timeout")

            let busy = try TestConnection.connected(port: port)
            let kept = monotonicSeconds()
            while monotonicSeconds() - kept < 4 {
                #expect(try busy.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
                sleepSeconds(0.3)
            }
        }
    }

    /// A body trickled a byte at a time resets libmicrohttpd's idle timeout as a header line did: such a connection
    /// was kept for as long as its declared length allowed (hours for 8 MiB). Once the timeout has passed since its
    /// head, a body must come at `minimumBodyRate` on average; a quick one on a kept-alive connection is untouched,
    /// and one that keeps the pace past the grace is not cut.
    @Test func aClientTricklingItsBodyIsClosedOnceTheGraceHasPassed() throws {
        var configuration = testConfiguration(connectionTimeout: .seconds(1))
        configuration.minimumBodyRate = 1000
        try withServer(configuration, handler: echoHandler) { server in
            let port = server.address.port
            let trickler = try TestConnection.connected(port: port)
            try trickler.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
            // Ten bytes every 0.3 s: never idle, 33 bytes a second.
            let (closed, elapsed) = Self.trickle(trickler, "0123456789", every: 0.3)
            #expect(closed, "a connection trickling its body was still open after \(elapsed) s")
            #expect(elapsed >= 0.9, "closed after \(elapsed) s, before the 1 s grace")

            // 2,000 bytes a second for 3 s: above the minimum, finished and answered.
            let steady = try TestConnection.connected(port: port)
            try steady.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6000\r\n\r\n")
            for _ in 0..<30 {
                try steady.send(String(repeating: "a", count: 200))
                sleepSeconds(0.1)
            }
            #expect(try steady.readResponse().status == 200)
        }
    }

    /// A head still arriving when the server stops is no request to let finish: one trickled a line a second held
    /// the stop for its whole grace period, and counted as abandoned.
    @Test func aStopDoesNotWaitForHeadsStillArriving() throws {
        let server = try HTTPServer(configuration: testConfiguration(connectionTimeout: .seconds(30)), handler: echoHandler)
        let trickler = try TestConnection.connected(port: server.address.port)
        try trickler.send("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")
        let idle = try TestConnection.connected(port: server.address.port)
        #expect(try idle.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
        #expect(eventually { server.requestsInFlight == 1 })
        let started = monotonicSeconds()
        let abandoned = server.stop(gracePeriod: .seconds(10))
        let elapsed = monotonicSeconds() - started
        #expect(abandoned == 0)
        #expect(elapsed < 5, "the stop waited \(elapsed) s for a head still arriving")
    }

    @Test func aClientThatStopsHalfwayIsClosedAfterTheTimeout() throws {
        let configuration = testConfiguration(connectionTimeout: .seconds(1))
        try withServer(configuration, handler: echoHandler) { server in
            let port = server.address.port
            // Slowloris: half a request line, then nothing.
            let stalled = try TestConnection.connected(port: port)
            let started = monotonicSeconds()
            try stalled.send("GET /slow HT")
            #expect(stalled.closesWithoutData(within: 8))
            let elapsed = monotonicSeconds() - started
            #expect(elapsed >= 0.9, "closed after \(elapsed) s, before the 1 s timeout")
            #expect(elapsed < 6, "closed after \(elapsed) s")

            // Headers that stop before their blank line, the same.
            let halfHeaders = try TestConnection.connected(port: port)
            try halfHeaders.send("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n")
            #expect(halfHeaders.closesWithoutData(within: 5))

            // A body that stops short of its declared length, the same, and the handler never sees it.
            let shortBody = try TestConnection.connected(port: port)
            try shortBody.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part")
            #expect(shortBody.closesWithoutData(within: 5))

            // And a kept-alive connection that idles after its request.
            let idle = try TestConnection.connected(port: port)
            #expect(try idle.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
            #expect(idle.closesWithoutData(within: 5))
            #expect(eventually { server.requestsInFlight == 0 })
        }
    }
}
