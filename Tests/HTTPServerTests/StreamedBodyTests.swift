import HTTPServer
import SuggestTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Response bodies made while they are sent (`StreamedBody`): what arrives, and that what the producer holds is let
/// go of exactly once however the response ends.
@Suite struct StreamedBodyTests {
    /// A producer of `bytes` in steps of varying sizes, counting its calls.
    private static func producer(of bytes: [UInt8], calls: CallCounter) -> StreamedBody.Producer {
        var offset = 0
        var generator = SeededRandom(seed: 0x57E4)
        return { output in
            calls.increment()
            let step = min(bytes.count - offset, Int.random(in: 1...90_000, using: &generator))
            output += bytes[offset..<(offset + step)]
            offset += step
            return offset == bytes.count
        }
    }

    /// Waits up to `seconds` for `condition`.
    private static func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    @Test func aStreamedBodyArrivesWholeAndTheConnectionStaysUsable() throws {
        let bytes = randomBytes(3_000_000, seed: 0x57E5)
        let ends = CallCounter()
        let calls = CallCounter()
        let handler: HTTPServer.Handler = { request in
            guard request.path == "/stream" else { return echoHandler(request) }
            let body = StreamedBody(produce: Self.producer(of: bytes, calls: calls), end: { ends.increment() })
            do { try body.start() } catch { return .text("start failed", status: .internalServerError) }
            return HTTPResponse(headers: ["Content-Type": "application/octet-stream"], streamedBody: body)
        }
        try withServer(handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            let response = try connection.exchange("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(response.status == 200)
            #expect(response.header("Transfer-Encoding")?.lowercased() == "chunked")
            #expect(response.body.count == bytes.count)
            #expect(fnv1a(response.body) == fnv1a(bytes))
            // The producer's hold was let go of once, as soon as it had made the last bytes.
            #expect(Self.eventually { ends.count == 1 })
            let next = try connection.exchange("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(echoed("path", in: next) == ["/after"])
            // HEAD gets GET's head (chunked, no Content-Length: 0) and no body, on a connection that closes after
            // it (MHD 0.9.75 would write a last chunk where the next response belongs); the body is ended unread.
            let head = try connection.exchange("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(head.status == 200)
            #expect(head.header("Transfer-Encoding")?.lowercased() == "chunked" && head.header("Content-Length") == nil)
            #expect(head.header("Connection")?.lowercased() == "close", "\(head)")
            #expect(Self.eventually { ends.count == 2 })
            let fresh = try TestConnection.connected(port: server.address.port)
            let afterHead = try fresh.exchange("GET /after-head HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(afterHead.status == 200 && echoed("path", in: afterHead) == ["/after-head"], "\(afterHead)")
        }
        #expect(ends.count == 2)
    }

    @Test func aBodyThatFailsAfterItsFirstBytesEndsWithoutItsLastChunk() throws {
        let ends = CallCounter()
        let log = LogLines()
        let handler: HTTPServer.Handler = { _ in
            var steps = 0
            let body = StreamedBody(
                produce: { output in
                    steps += 1
                    guard steps <= 3 else { throw HarnessError("the store went away") }
                    output += [UInt8](repeating: 0x61, count: 40_000)
                    return false
                }, end: { ends.increment() })
            do { try body.start() } catch { return .text("start failed", status: .internalServerError) }
            return HTTPResponse(streamedBody: body)
        }
        try withServer(log: log, handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            #expect(throws: (any Error).self) { try connection.exchange("GET /fails HTTP/1.1\r\nHost: x\r\n\r\n") }
            #expect(Self.eventually { ends.count == 1 })
            #expect(log.contains("ended before it was complete: the store went away"), "\(log.all)")
        }
        #expect(ends.count == 1)
    }

    @Test func aClientThatGoesAwayEndsTheBody() throws {
        let ends = CallCounter()
        let calls = CallCounter()
        let handler: HTTPServer.Handler = { _ in
            // Never complete: only the client's going away ends it.
            let body = StreamedBody(
                produce: { output in
                    calls.increment()
                    output += [UInt8](repeating: 0x62, count: 64 << 10)
                    return false
                }, end: { ends.increment() })
            do { try body.start() } catch { return .text("start failed", status: .internalServerError) }
            return HTTPResponse(streamedBody: body)
        }
        try withServer(handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("GET /endless HTTP/1.1\r\nHost: x\r\n\r\n")
            var byte: UInt8 = 0
            #expect(recv(connection.descriptor, &byte, 1, 0) == 1)
            connection.close()
            #expect(Self.eventually { ends.count == 1 })
            // Once ended, it is not asked for more.
            let made = calls.count
            usleep(200_000)
            #expect(calls.count == made)
        }
        #expect(ends.count == 1)
    }

    @Test func cutOffFromAnotherThreadEndsABodyItsClientIsNotReading() throws {
        let ends = CallCounter()
        let log = LogLines()
        let started = Mutex<StreamedBody?>(nil)
        let handler: HTTPServer.Handler = { _ in
            let body = StreamedBody(
                produce: { output in
                    output += [UInt8](repeating: 0x63, count: 64 << 10)
                    return false
                }, end: { ends.increment() })
            do { try body.start() } catch { return .text("start failed", status: .internalServerError) }
            started.withLock { $0 = body }
            return HTTPResponse(streamedBody: body)
        }
        try withServer(log: log, handler: handler) { server in
            let connection = try TestConnection.connected(port: server.address.port)
            try connection.send("GET /unread HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(Self.eventually { started.withLock { $0 != nil } })
            // The client reads nothing: the producer is not asked again, and only the cut-off ends the body.
            usleep(300_000)
            #expect(ends.count == 0)
            started.withLock { $0 }?.cutOff("took too long for the test")
            #expect(ends.count == 1)
            // What was made already still arrives, then the connection closes without the last chunk.
            #expect(throws: (any Error).self) { try connection.readResponse() }
            #expect(Self.eventually { log.contains("took too long for the test") }, "\(log.all)")
        }
        #expect(ends.count == 1)
    }

    @Test func aBodyWhoseFirstBytesCannotBeMadeEndsAtItsStart() {
        let ends = CallCounter()
        let body = StreamedBody(produce: { _ in throw HarnessError("no store") }, end: { ends.increment() })
        #expect(throws: HarnessError.self) { try body.start() }
        #expect(ends.count == 1)
        body.end()
        body.cutOff("late")
        #expect(ends.count == 1)
    }
}
