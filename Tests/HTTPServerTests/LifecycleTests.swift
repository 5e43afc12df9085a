import Dispatch
import HTTPServer
import SuggestTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Binding, the configuration's checks, the graceful stop, and the worker threads' signal mask.
@Suite struct LifecycleTests {
    @Test func portZeroGivesARealPortAndATakenPortIsAClearError() throws {
        try withServer(handler: echoHandler) { server in
            #expect(server.address.port > 0)
            #expect(server.address.host == "127.0.0.1")
            let connection = try TestConnection.connected(port: server.address.port)
            #expect(try connection.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)

            var taken = testConfiguration()
            taken.port = server.address.port
            expectError {
                _ = try HTTPServer(configuration: taken, handler: echoHandler)
            } where: { error in
                let message = (error as? HTTPServerError)?.message ?? ""
                return message.contains("127.0.0.1:\(server.address.port)") && message.contains("in use")
                    && message.contains("choose another port")
            }
        }
    }

    @Test func localhostIsIPv4Loopback() throws {
        try withServer(testConfiguration(host: "localhost"), handler: echoHandler) { server in
            #expect(server.address.host == "127.0.0.1")
            let connection = try TestConnection.connected(port: server.address.port)
            #expect(try connection.exchange("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 200)
        }
    }

    @Test(.enabled(if: ipv6LoopbackAvailable), arguments: ["::1", "[::1]"])
    func bindsIPv6Loopback(host: String) throws {
        try withServer(testConfiguration(host: host), handler: echoHandler) { server in
            #expect(server.address.host == "::1")
            #expect(server.address.isIPv6)
            #expect(server.address.description == "[::1]:\(server.address.port)")
            let connection = try TestConnection.connected(host: "::1", port: server.address.port)
            let response = try connection.exchange("GET /six HTTP/1.1\r\nHost: [::1]\r\n\r\n")
            #expect(response.status == 200)
            #expect(echoed("client", in: response).first?.hasPrefix("[::1]:") == true)
            // Exactly that address: IPv4 loopback on the same port is not served.
            let ipv4 = TestConnection.open(port: server.address.port)
            if case .failure(let failure) = ipv4 { #expect(failure.refused) } else { Issue.record("IPv4 connected") }
        }
    }

    @Test(arguments: [
        ("example.com", "is not an IPv4 or IPv6 address"), ("", "is not an IPv4 or IPv6 address"),
        ("127.0.0.256", "is not an IPv4 or IPv6 address"), ("192.0.2.1", "give an address of this machine"),
    ])
    func aHostThatCannotBeBoundIsAClearError(host: String, expected: String) {
        expectError {
            _ = try HTTPServer(configuration: testConfiguration(host: host), handler: echoHandler)
        } where: { error in
            (error as? HTTPServerError)?.message.contains(expected) == true
        }
    }

    /// Loopback is decided from the parsed address, not the text: `127.evil.example` was "loopback" by its prefix.
    @Test(arguments: [
        ("localhost", true), ("127.0.0.1", true), ("127.8.9.10", true), ("::1", true), ("[::1]", true),
        ("0:0:0:0:0:0:0:1", true), ("127.evil.example", false), ("0.0.0.0", false), ("::", false),
        ("::2", false), ("10.0.0.1", false), ("128.0.0.1", false),
    ])
    func loopbackIsDecidedFromTheAddress(host: String, isLoopback: Bool) {
        #expect(HTTPServer.isLoopback(host) == isLoopback)
    }

    @Test func anOutOfRangeConfigurationIsAClearError() {
        var configurations: [(HTTPServer.Configuration, String)] = []
        var configuration = testConfiguration()
        configuration.port = 70_000
        configurations.append((configuration, "port 70000"))
        configuration = testConfiguration(workerThreads: 0)
        configurations.append((configuration, "workerThreads 0"))
        configuration = testConfiguration(connectionLimit: 0)
        configurations.append((configuration, "connectionLimit 0"))
        configuration = testConfiguration(perIPConnectionLimit: 0)
        configurations.append((configuration, "perIPConnectionLimit 0"))
        configuration = testConfiguration(maximumBodySize: -1)
        configurations.append((configuration, "maximumBodySize -1"))
        configuration = testConfiguration()
        configuration.memoryLimitPerConnection = 100
        configurations.append((configuration, "memoryLimitPerConnection 100"))
        for (configuration, expected) in configurations {
            expectError {
                _ = try HTTPServer(configuration: configuration, handler: echoHandler)
            } where: { error in
                (error as? HTTPServerError)?.message.contains(expected) == true
            }
        }
    }

    @Test func aGracefulStopFinishesTheRequestInFlightAndRefusesNewConnections() throws {
        // The slow request runs until the test opens the gate, however slowly the machine runs the test.
        // Its handler says when it has begun: a count of requests in flight also counts one whose head is still
        // arriving (which a stop cuts) and the warm-up's until its completion, and the stop then came too early.
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Bool>(false)
        let handler: HTTPServer.Handler = { request in
            if request.path == "/slow" {
                entered.store(true, ordering: .sequentiallyConsistent)
                _ = gate.wait(timeout: .now() + 30)
            }
            return .text("done \(request.path)\n")
        }
        let server = try HTTPServer(configuration: testConfiguration(), handler: handler)
        defer { server.stop(gracePeriod: .zero) }
        let port = server.address.port
        let idle = try TestConnection.connected(port: port)
        #expect(try idle.exchange("GET /warm HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)

        let slow = try TestConnection.connected(port: port)
        try slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(eventually(within: 10) { entered.load(ordering: .sequentiallyConsistent) })
        #expect(eventually(within: 10) { server.requestsInFlight == 1 })
        let abandoned = Atomic<Int>(-1)
        let stopped = DispatchSemaphore(value: 0)
        let started = monotonicSeconds()
        let stopper = try TestThread {
            abandoned.store(server.stop(gracePeriod: .seconds(10)), ordering: .relaxed)
            stopped.signal()
        }
        defer { stopper.join() }
        // New connections are refused while the slow request is still running.
        #expect(
            eventually(within: 10) {
                if case .failure(let f) = TestConnection.open(port: port) { f.refused } else { false }
            })
        #expect(server.isStopping)
        #expect(server.requestsInFlight == 1)
        #expect(slow.staysSilent(for: 0.1))
        slow.setTimeout(5)
        gate.signal()
        let response = try slow.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "done /slow\n")
        #expect(response.header("connection")?.lowercased() == "close")
        #expect(stopped.wait(timeout: .now() + 5) == .success)
        #expect(abandoned.load(ordering: .relaxed) == 0)
        #expect(monotonicSeconds() - started < 5)
        // The idle kept-alive connection is closed by the stop.
        #expect(idle.closesWithoutData(within: 2))
        #expect(server.stop() == 0)
    }

    @Test func aGracePeriodThatRunsOutCountsTheRequestsCutOff() throws {
        let entered = Atomic<Bool>(false)
        let handler: HTTPServer.Handler = { request in
            entered.store(true, ordering: .sequentiallyConsistent)
            sleepSeconds(1.5)
            return .text("late\n")
        }
        let server = try HTTPServer(configuration: testConfiguration(), handler: handler)
        let slow = try TestConnection.connected(port: server.address.port)
        try slow.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(eventually(within: 10) { entered.load(ordering: .sequentiallyConsistent) })
        #expect(server.stop(gracePeriod: .milliseconds(50)) == 1)
        #expect(server.requestsInFlight == 0)
    }

    /// For a process about to end, a handler that runs past the grace period does not hold the stop: it returns
    /// at once with the count, and a later stop joins the threads once the handler has returned.
    @Test func aStopForTheProcessEndDoesNotWaitForAHandlerPastTheGrace() throws {
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Bool>(false)
        let handler: HTTPServer.Handler = { _ in
            entered.store(true, ordering: .sequentiallyConsistent)
            _ = gate.wait(timeout: .now() + 30)
            return .text("late\n")
        }
        let server = try HTTPServer(configuration: testConfiguration(), handler: handler)
        let slow = try TestConnection.connected(port: server.address.port)
        try slow.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(eventually(within: 10) { entered.load(ordering: .sequentiallyConsistent) })
        let started = monotonicSeconds()
        #expect(server.stop(gracePeriod: .milliseconds(100), leavingHandlersRunning: true) == 1)
        #expect(monotonicSeconds() - started < 3)
        #expect(server.isStopping)
        gate.signal()
        server.stop()
        #expect(server.requestsInFlight == 0)
    }

    @Test func workerThreadsHaveTheStopSignalsBlocked() throws {
        // This test's thread blocks none of them; the workers must all the same.
        var none = sigset_t()
        sigemptyset(&none)
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let handler: HTTPServer.Handler = { _ in
            var mask = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &mask)
            let blocked = [SIGTERM, SIGINT, SIGHUP].map { sigismember(&mask, $0) == 1 }
            return .text(blocked.map { $0 ? "1" : "0" }.joined())
        }
        try withServer(testConfiguration(workerThreads: 2), handler: handler) { server in
            for _ in 0..<4 {
                let connection = try TestConnection.connected(port: server.address.port)
                #expect(try connection.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n").text == "111")
            }
        }
        var after = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &after)
        #expect(sigismember(&after, SIGTERM) == 0, "the caller's mask is restored")
    }
}
