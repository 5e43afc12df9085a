import Dispatch
import HTTPServer
import SuggestTestSupport
import Synchronization
import Testing

/// Many clients at once, each checking that every answer is its own.
@Suite struct ConcurrencyTests {
    @Test(arguments: [1, 2, 4])
    func manyConcurrentRequestsAreAllAnsweredCorrectly(workerThreads: Int) throws {
        let clients = 8
        let requestsPerClient = 60
        let failures = Mutex<[String]>([])
        let answered = Atomic<Int>(0)
        try withServer(testConfiguration(workerThreads: workerThreads), handler: echoHandler) { server in
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
        // Four connections opened at once, as a load balancer or a benchmark opens them, and each request held in
        // its handler until a second one is inside too (or 2 s pass): with every connection on one worker thread
        // (MHD's own accepting gives a worker up to ten in a row) only one request at a time could be inside.
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
            let connections = try (0..<4).map { _ in try TestConnection.connected(port: port) }
            for (index, connection) in connections.enumerated() {
                try connection.send("GET /\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
            }
            for connection in connections { #expect(try connection.readResponse().status == 200) }
        }
        #expect(mostInside.load(ordering: .acquiring) == 2)
    }
}
