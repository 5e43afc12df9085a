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
            #expect(eventually { ends.count == 1 })
            let next = try connection.exchange("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(echoed("path", in: next) == ["/after"])
            // HEAD gets GET's head (chunked, no Content-Length: 0) and no body, on a connection that closes after
            // it (MHD 0.9.75 would write a last chunk where the next response belongs); the body is ended unread.
            let head = try connection.exchange("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(head.status == 200)
            #expect(head.header("Transfer-Encoding")?.lowercased() == "chunked" && head.header("Content-Length") == nil)
            #expect(head.header("Connection")?.lowercased() == "close", "\(head)")
            #expect(eventually { ends.count == 2 })
            let fresh = try TestConnection.connected(port: server.address.port)
            let afterHead = try fresh.exchange("GET /after-head HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(afterHead.status == 200 && echoed("path", in: afterHead) == ["/after-head"], "\(afterHead)")
        }
        #expect(ends.count == 2)
    }

    /// A client with a small receive window, reading steadily: the kernel's send queue (megabytes) drained so
    /// slowly that the socket stayed unwritable past the idle timeout, and MHD closed the connection halfway through
    /// the body. A streamed body has a timeout of its own (`streamedBodyTimeout`).
    @Test func aSlowSteadyReaderGetsTheWholeBodyPastTheIdleTimeout() throws {
        let bytes = randomBytes(6_000_000, seed: 0x57E6)
        let handler: HTTPServer.Handler = { _ in
            let body = StreamedBody(produce: Self.producer(of: bytes, calls: CallCounter()), end: {})
            do { try body.start() } catch { return .text("start failed", status: .internalServerError) }
            return HTTPResponse(headers: ["Content-Type": "application/octet-stream"], streamedBody: body)
        }
        try withServer(testConfiguration(connectionTimeout: .seconds(1)), handler: handler) { server in
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #expect(descriptor >= 0)
            defer { close(descriptor) }
            var window: Int32 = 65536
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &window, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(server.address.port).bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            #expect(connected == 0)
            let request = Array("GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            #expect(send(descriptor, request, request.count, 0) == request.count)
            // About 640 kB a second, never pausing: the body takes about 9 s, the idle timeout is 1 s.
            var received = 0
            var tail: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 32768)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += count
                tail = Array((tail + chunk[0..<count]).suffix(5))
                usleep(50_000)
            }
            #expect(received > bytes.count, "the body was cut after \(received) bytes")
            #expect(tail == Array("0\r\n\r\n".utf8), "the body ended without its last chunk")
        }
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
            #expect(eventually { ends.count == 1 })
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
            #expect(eventually { ends.count == 1 })
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
            #expect(eventually { started.withLock { $0 != nil } })
            // The client reads nothing: the producer is not asked again, and only the cut-off ends the body.
            usleep(300_000)
            #expect(ends.count == 0)
            started.withLock { $0 }?.cutOff("took too long for the test")
            #expect(ends.count == 1)
            // What was made already still arrives, then the connection closes without the last chunk.
            #expect(throws: (any Error).self) { try connection.readResponse() }
            #expect(eventually { log.contains("took too long for the test") }, "\(log.all)")
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
