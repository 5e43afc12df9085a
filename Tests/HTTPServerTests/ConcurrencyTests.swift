import Dispatch
import HTTPServer
import SuggestTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Many clients at once, each checking that every answer is its own.
@Suite struct ConcurrencyTests {
    /// Worker threads, and handler threads for the POSTs (0: they run on the workers).
    @Test(arguments: [(1, 0), (2, 0), (4, 0), (1, 3), (2, 8)])
    func manyConcurrentRequestsAreAllAnsweredCorrectly(threads: (workers: Int, handlers: Int)) throws {
        let clients = 8
        let requestsPerClient = 60
        let failures = Mutex<[String]>([])
        let answered = Atomic<Int>(0)
        let configuration = testConfiguration(workerThreads: threads.workers, handlerThreads: threads.handlers)
        try withServer(configuration, handler: echoHandler) { server in
            let port = server.address.port
            DispatchQueue.concurrentPerform(iterations: clients) { client in
                var generator = SeededRandom(seed: 0xC0DE + UInt64(client))
                do {
                    var connection = try TestConnection.connected(port: port)
                    for index in 0..<requestsPerClient {
                        // Now and then a fresh connection, and sometimes a body.
                        if index % 17 == 16 { connection = try TestConnection.connected(port: port) }
                        let size = Int.random(in: 0...3000, using: &generator)
                        let body = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        let path = "/c\(client)/r\(index)"
                        try connection.send(
                            "POST \(path)?client=\(client)&n=\(index) HTTP/1.1\r\nHost: x\r\n"
                                + "Content-Length: \(size)\r\n\r\n")
                        try connection.send(body)
                        let response = try connection.readResponse()
                        let expected = ["\(size) \(fnv1a(body))"]
                        if response.status != 200 || echoed("path", in: response) != [path]
                            || echoed("body", in: response) != expected
                            || echoed("item", in: response) != ["[client]=[\(client)]", "[n]=[\(index)]"]
                        {
                            failures.withLock { $0.append("client \(client) request \(index): \(response)") }
                        }
                        answered.add(1, ordering: .relaxed)
                    }
                } catch {
                    failures.withLock { $0.append("client \(client): \(error)") }
                }
            }
            #expect(eventually { server.requestsInFlight == 0 })
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        #expect(answered.load(ordering: .relaxed) == clients * requestsPerClient)
    }

    @Test func connectionsOpenedTogetherAreSpreadOverTheWorkers() throws {
        // Four connections opened at once, as a load balancer or a benchmark opens them: with every connection on
        // one worker thread (MHD's own accepting gives a worker up to ten in a row) only one request at a time
        // could be inside.
        #expect(try Self.mostRequestsInsideAtOnce(fromConnectionsOpened: {}) == 2)
    }

    @Test func connectionsAreDealtInTurnWhateverTheirSocketNumbers() throws {
        // The same four connections with sockets that all get odd numbers (the process's lowest free numbers are
        // made the odd ones), as other files opened and closed between accepts may leave them: MHD alone gives a
        // connection to the worker that its number names (modulo the workers), so all four would land on one.
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        let most = try Self.mostRequestsInsideAtOnce(fromConnectionsOpened: {
            held = (0..<64).map { _ in open("/dev/null", O_RDONLY) }
            for descriptor in held where descriptor % 2 == 1 { close(descriptor) }
            held.removeAll { $0 % 2 == 1 }
        })
        #expect(most == 2)
    }

    /// Four connections to a server of two workers, opened after `prepare`, each sending one request that its
    /// handler holds until a second one is inside too (or 2 s pass): how many were inside at once.
    private static func mostRequestsInsideAtOnce(fromConnectionsOpened prepare: () -> Void) throws -> Int {
        let inside = Atomic<Int>(0)
        let mostInside = Atomic<Int>(0)
        let handler: HTTPServer.Handler = { request in
            let now = inside.add(1, ordering: .acquiringAndReleasing).newValue
            mostInside.max(now, ordering: .acquiringAndReleasing)
            _ = eventually(within: 2) { inside.load(ordering: .acquiring) >= 2 }
            sleepSeconds(0.05)
            inside.subtract(1, ordering: .acquiringAndReleasing)
            return .text("ok")
        }
        try withServer(testConfiguration(workerThreads: 2), handler: handler) { server in
            let port = server.address.port
            prepare()
            let connections = try (0..<4).map { _ in try TestConnection.connected(port: port) }
            for (index, connection) in connections.enumerated() {
                try connection.send("GET /\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
            }
            for connection in connections { #expect(try connection.readResponse().status == 200) }
        }
        return mostInside.load(ordering: .acquiring)
    }

    @Test func requestsThatMayWaitWaitTogetherWhileTheWorkerGoesOn() throws {
        // One worker, four handler threads: four POSTs held in their handler, and a GET sent meanwhile. On the
        // worker, one POST at a time could be inside, and the GET would wait behind it (and fail at its read's
        // time limit).
        let inside = Atomic<Int>(0)
        let mostInside = Atomic<Int>(0)
        let getAnsweredWhileHeld = Atomic<Bool>(false)
        // The POSTs are let go once the GET was answered (or after 30 s): a fixed hold of 0.1 s after the fourth
        // came in left a loaded machine too little time to send and answer the GET.
        let released = Atomic<Bool>(false)
        let handler: HTTPServer.Handler = { request in
            guard request.method == .post else {
                getAnsweredWhileHeld.store(inside.load(ordering: .acquiring) > 0, ordering: .releasing)
                return .text("read")
            }
            let now = inside.add(1, ordering: .acquiringAndReleasing).newValue
            mostInside.max(now, ordering: .acquiringAndReleasing)
            _ = eventually(within: 30) { released.load(ordering: .acquiring) }
            inside.subtract(1, ordering: .acquiringAndReleasing)
            return .text("written")
        }
        try withServer(testConfiguration(workerThreads: 1, handlerThreads: 4), handler: handler) { server in
            let port = server.address.port
            let writers = try (0..<4).map { _ in try TestConnection.connected(port: port) }
            for (index, connection) in writers.enumerated() {
                try connection.send("POST /\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")
            }
            #expect(eventually { inside.load(ordering: .acquiring) >= 1 })
            let reader = try TestConnection.connected(port: port)
            try reader.send("GET /read HTTP/1.1\r\nHost: x\r\n\r\n")
            let read = try reader.readResponse()
            #expect(read.status == 200 && read.text == "read")
            // All four inside at once, with the GET answered beside them.
            #expect(eventually(within: 10) { inside.load(ordering: .acquiring) >= 4 })
            released.store(true, ordering: .releasing)
            for connection in writers {
                let written = try connection.readResponse()
                #expect(written.status == 200 && written.text == "written")
            }
        }
        #expect(mostInside.load(ordering: .acquiring) == 4)
        let heldWhenRead = getAnsweredWhileHeld.load(ordering: .acquiring)
        #expect(heldWhenRead, "the GET waited for the POSTs")
    }

    @Test func aStopLetsTheRequestsOnHandlerThreadsFinish() throws {
        let inside = Atomic<Int>(0)
        let handler: HTTPServer.Handler = { _ in
            inside.add(1, ordering: .acquiringAndReleasing)
            sleepSeconds(0.3)
            return .text("finished")
        }
        let server = try HTTPServer(
            configuration: testConfiguration(workerThreads: 1, handlerThreads: 2), mayWait: { _ in true },
            handler: handler)
        let connections = try (0..<3).map { _ in try TestConnection.connected(port: server.address.port) }
        for connection in connections {
            try connection.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        }
        // Two on the handler threads, the third queued for one of them (its head read: a stop cuts a head still
        // arriving).
        #expect(eventually(within: 10) { inside.load(ordering: .acquiring) >= 2 })
        #expect(eventually(within: 10) { server.requestsInFlight == 3 })
        #expect(server.stop(gracePeriod: .seconds(5)) == 0)
        for connection in connections {
            let response = try connection.readResponse()
            #expect(response.status == 200 && response.text == "finished")
        }
    }

    /// Requests that wait only briefly run on reader threads of their own: a GET is answered while every handler
    /// thread is held by a slow POST, and a stop lets both kinds finish.
    @Test func briefRequestsRunOnReaderThreadsBesideTheSlowOnes() throws {
        let release = Atomic(false)
        let slowInside = Atomic(false)
        let handler: HTTPServer.Handler = { request in
            if request.method == .post {
                slowInside.store(true, ordering: .releasing)
                while !release.load(ordering: .acquiring) { sleepSeconds(0.005) }
                return .text("slow")
            }
            return .text("brief")
        }
        var configuration = testConfiguration(workerThreads: 1, handlerThreads: 1)
        configuration.readerThreads = 1
        let server = try HTTPServer(
            configuration: configuration, mayWait: { _ in true }, waitsBriefly: { $0.method == .get },
            handler: handler)
        let slow = try TestConnection.connected(port: server.address.port)
        try slow.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        #expect(eventually { slowInside.load(ordering: .acquiring) })
        let brief = try TestConnection.connected(port: server.address.port)
        try brief.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let answer = try brief.readResponse()
        #expect(answer.status == 200 && answer.text == "brief")
        let released = release.load(ordering: .acquiring)
        #expect(!released, "the GET was answered only after the POST")
        release.store(true, ordering: .releasing)
        #expect(try slow.readResponse().text == "slow")
        #expect(server.stop(gracePeriod: .seconds(5)) == 0)
    }
}
