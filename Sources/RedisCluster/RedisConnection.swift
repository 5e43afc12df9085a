import CHiredis
import CSystem
import Synchronization

/// One blocking hiredis connection to one node, logged in and ready.
///
/// A connection is used by one caller at a time (the pool hands it out and takes it back); the mutex around the
/// hiredis context is what makes that hand-over between threads safe, and it is never contended. After any I/O
/// error the connection is `broken` and the pool closes it instead of keeping it.
final class RedisConnection: Sendable {
    let endpoint: RedisEndpoint
    private let state: Mutex<State>

    /// The hiredis context and whether it can still be used.
    private struct State {
        let context: UnsafeMutablePointer<redisContext>
        var broken = false
    }

    /// Opens a connection, sets its timeouts and logs in.
    /// - Throws: ``RedisError/unreachable(_:reason:)`` when no connection can be made,
    ///   ``RedisError/authenticationFailed(_:reason:)`` when the login is refused, or the error of the login's reply.
    init(to endpoint: RedisEndpoint, configuration: RedisClusterConfiguration) throws(RedisError) {
        self.endpoint = endpoint
        guard
            let context = redisConnectWithTimeout(
                endpoint.host, Int32(endpoint.port), RedisConnection.timeValue(configuration.connectTimeout))
        else { throw .unreachable([endpoint], reason: "could not allocate a connection") }
        if context.pointee.err != 0 {
            let reason = RedisConnection.errorText(context)
            redisFree(context)
            throw .unreachable([endpoint], reason: reason)
        }
        chiredis_close_on_exec(context.pointee.fd)
        redisSetTimeout(context, RedisConnection.timeValue(configuration.commandTimeout))
        redisEnableKeepAlive(context)
        state = Mutex(State(context: context))
        if let password = configuration.password {
            var auth = RedisCommand("AUTH")
            if let username = configuration.username { auth.append(username) }
            auth.append(password)
            try append(auth)
            let reply = try readReply(timeout: configuration.commandTimeout)
            if case .error(let message) = reply {
                throw .authenticationFailed(endpoint, reason: RedisError.loginRefusal(message))
            }
        }
    }

    deinit { state.withLock { redisFree($0.context) } }

    /// Whether the connection has failed and must not be used again.
    var isBroken: Bool { state.withLock { $0.broken } }

    /// Whether the connection sat idle while its server closed it (or sent something unasked): such a connection
    /// is dropped before a command is written into it.
    var isStale: Bool {
        state.withLock { state in state.broken || chiredis_socket_is_readable(state.context.pointee.fd) != 0 }
    }

    /// Queues a command in the output buffer; nothing is sent until ``flush(timeout:)`` or ``readReply(timeout:)``.
    /// - Throws: ``RedisError/connectionLost(_:reason:mayHaveRun:)`` if hiredis cannot take the command.
    func append(_ command: RedisCommand) throws(RedisError) {
        let failure: String? = state.withLock { state in
            let appended = command.bytes.withUnsafeBytes { raw -> Int32 in
                let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
                let count = command.ends.count
                return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { argv in
                    withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { lengths in
                        var start = 0
                        for (index, end) in command.ends.enumerated() {
                            argv[index] = base.map { UnsafePointer($0 + start) }
                            lengths[index] = end - start
                            start = end
                        }
                        return redisAppendCommandArgv(
                            state.context, Int32(count), argv.baseAddress, UnsafePointer(lengths.baseAddress))
                    }
                }
            }
            guard appended != REDIS_OK else { return nil }
            state.broken = true
            return RedisConnection.errorText(state.context)
        }
        if let failure { throw .connectionLost(endpoint, reason: failure, mayHaveRun: false) }
    }

    /// Writes every queued command to the socket.
    /// - Throws: ``RedisError/timeout(_:seconds:waitingFor:)`` or ``RedisError/connectionLost(_:reason:mayHaveRun:)``
    ///   (the commands may have reached the server in part).
    func flush(timeout: Duration) throws(RedisError) {
        let failure: RedisError? = state.withLock { state in
            var done: Int32 = 0
            while done == 0 {
                if redisBufferWrite(state.context, &done) != REDIS_OK {
                    state.broken = true
                    return RedisConnection.ioError(state.context, endpoint, timeout: timeout, waitingFor: "write")
                }
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Reads the next reply (writing whatever is still queued first).
    /// - Returns: the reply; an error reply is a value (``RedisValue/error(_:)``), not a thrown error.
    /// - Throws: ``RedisError/timeout(_:seconds:waitingFor:)``, ``RedisError/connectionLost(_:reason:mayHaveRun:)``
    ///   or ``RedisError/protocolError(_:reason:)``; the connection is broken afterwards.
    func readReply(timeout: Duration) throws(RedisError) -> RedisValue {
        let outcome: Result<RedisValue, RedisError> = state.withLock { state in
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(state.context, &raw) == REDIS_OK, let raw else {
                state.broken = true
                return .failure(RedisConnection.ioError(state.context, endpoint, timeout: timeout, waitingFor: "reply"))
            }
            defer { freeReplyObject(raw) }
            return .success(RedisConnection.value(of: raw.assumingMemoryBound(to: redisReply.self)))
        }
        return try outcome.get()
    }

    /// Sends one command and reads its reply.
    func roundTrip(_ command: RedisCommand, timeout: Duration) throws(RedisError) -> RedisValue {
        try append(command)
        return try readReply(timeout: timeout)
    }

    /// A hiredis reply as a value (copied: hiredis frees its own afterwards).
    private static func value(of reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let item = reply.pointee
        switch item.type {
        case REDIS_REPLY_STRING:
            return .bulkString(Array(UnsafeRawBufferPointer(start: item.str, count: item.len)))
        case REDIS_REPLY_STATUS:
            return .simpleString(
                String(decoding: UnsafeRawBufferPointer(start: item.str, count: item.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: UnsafeRawBufferPointer(start: item.str, count: item.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(item.integer)
        case REDIS_REPLY_ARRAY:
            guard let elements = item.element else { return .array([]) }
            var values: [RedisValue] = []
            values.reserveCapacity(item.elements)
            for index in 0..<item.elements {
                if let element = elements[index] { values.append(value(of: element)) } else { values.append(.null) }
            }
            return .array(values)
        default:
            return .null
        }
    }

    /// The error for a failed read or write on `context`.
    private static func ioError(
        _ context: UnsafeMutablePointer<redisContext>, _ endpoint: RedisEndpoint, timeout: Duration,
        waitingFor: String
    ) -> RedisError {
        let code = context.pointee.err
        let text = errorText(context)
        let number = system_errno()
        if code == REDIS_ERR_IO
            && (number == EAGAIN || number == EWOULDBLOCK || text == "Resource temporarily unavailable")
        {
            return .timeout(endpoint, seconds: timeout.seconds, waitingFor: waitingFor)
        }
        switch code {
        case REDIS_ERR_PROTOCOL: return .protocolError(endpoint, reason: text)
        case REDIS_ERR_EOF:
            return .connectionLost(endpoint, reason: "the server closed the connection", mayHaveRun: true)
        default: return .connectionLost(endpoint, reason: text.isEmpty ? "I/O error" : text, mayHaveRun: true)
        }
    }

    /// hiredis's error text for the context (a fixed-size C string inside the struct).
    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    private static func timeValue(_ duration: Duration) -> timeval {
        let parts = duration.components
        return timeval(tv_sec: Int(parts.seconds), tv_usec: Int(parts.attoseconds / 1_000_000_000_000))
    }
}
