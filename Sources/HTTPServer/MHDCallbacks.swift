import CMicroHTTPD
import Synchronization

/// MHD's URI callback: a request line has arrived. Its result is the request's context pointer.
func mhdRequestStarted(
    _ closure: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let closure else { return nil }
    ServerCore.from(closure).inFlight.add(1, ordering: .relaxed)
    let connectionContext = connection.flatMap(suggest_mhd_socket_context).map {
        Unmanaged<ConnectionContext>.fromOpaque($0).takeUnretainedValue()
    }
    let context = Unmanaged.passRetained(RequestContext(uri: uri, connection: connectionContext)).toOpaque()
    if let uri { skipMHDQueryParsing(uri) }
    connectionContext?.pendingRequest = context
    return context
}

/// Keeps MHD from reading the query into its own list of arguments, which nothing here reads (`RequestTarget`
/// parses the target this callback copied): each argument takes room in the connection's memory, and about a
/// thousand of them (a 3 KB target) ran it out, where MHD 0.9.75 could not send its own 431 either and left the
/// client waiting for the connection's timeout. MHD has found the first `?` of the target before this callback,
/// and reads the arguments from the byte after it once the callback returns; that byte becomes the end of the
/// string, in MHD's buffer of the connection (writable: MHD itself ends the path there), so that it reads none.
///
/// MHD looked for the `?` over the target's whole length, past a byte 0 in it (a target this server then refuses),
/// so the search here goes past one too, up to the target's end: a 0 followed by the HTTP version (`HTTP/d.d`,
/// which MHD has checked) and the 0 that ends the line. Every byte read is in the request line.
private func skipMHDQueryParsing(_ uri: UnsafePointer<CChar>) {
    let question = UInt8(ascii: "?")
    var byte = UnsafeMutableRawPointer(mutating: uri)
    while true {
        let value = byte.load(as: UInt8.self)
        if value == question {
            if byte.load(fromByteOffset: 1, as: UInt8.self) != 0 { byte.storeBytes(of: 0, toByteOffset: 1, as: UInt8.self) }
            return
        }
        if value == 0 && versionFollows(byte) { return }
        byte += 1
    }
}

/// Whether the byte 0 at `end` is the end of the target: `HTTP/d.d` and a 0 follow it. Asked at least once a
/// request (where its target ends), so without an allocation.
private func versionFollows(_ end: UnsafeMutableRawPointer) -> Bool {
    func byte(_ offset: Int) -> UInt8 { end.load(fromByteOffset: offset, as: UInt8.self) }
    func isDigit(_ value: UInt8) -> Bool { value >= 0x30 && value <= 0x39 }
    return byte(1) == UInt8(ascii: "H") && byte(2) == UInt8(ascii: "T") && byte(3) == UInt8(ascii: "T")
        && byte(4) == UInt8(ascii: "P") && byte(5) == UInt8(ascii: "/") && isDigit(byte(6))
        && byte(7) == UInt8(ascii: ".") && isDigit(byte(8)) && byte(9) == 0
}

/// MHD's access handler.
func mhdAccess(
    _ closure: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ upload: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?, _ contextPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let closure, let connection, let uploadSize, let stored = contextPointer?.pointee else { return .NO }
    let context = Unmanaged<RequestContext>.fromOpaque(stored).takeUnretainedValue()
    return ServerCore.from(closure).handle(
        connection, context, method: method, version: version, upload: upload, uploadSize: uploadSize)
}

/// MHD's completion callback: the request has ended, however it ended.
func mhdRequestEnded(
    _ closure: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ contextPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let closure, let contextPointer, let stored = contextPointer.pointee else { return }
    contextPointer.pointee = nil
    ServerCore.from(closure).endRequest(stored, reason: reason)
}

/// MHD's connection notification: a connection it was handed has started or closed.
func mhdConnectionChanged(
    _ closure: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ change: MHD_ConnectionNotificationCode
) {
    guard let closure, let socketContext else { return }
    switch change {
    case .CONNECTION_NOTIFY_STARTED:
        let core = ServerCore.from(closure)
        let connectionContext = ConnectionContext()
        if core.headTimeoutNanoseconds > 0, let connection {
            let socket = suggest_mhd_connection_socket(connection)
            if socket >= 0 {
                let wait = ClientWait(socket: socket)
                core.clientWaits.withLock { $0[ObjectIdentifier(wait)] = wait }
                connectionContext.clientWait = wait
            }
        }
        socketContext.pointee = Unmanaged.passRetained(connectionContext).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        let core = ServerCore.from(closure)
        if let kept = socketContext.pointee {
            socketContext.pointee = nil
            let connectionContext = Unmanaged<ConnectionContext>.fromOpaque(kept).takeRetainedValue()
            // Before MHD closes the socket (it notifies first): the sweep never shuts a number down once it is free.
            if let wait = connectionContext.clientWait {
                _ = core.clientWaits.withLock { $0.removeValue(forKey: ObjectIdentifier(wait)) }
            }
            if let abandoned = connectionContext.pendingRequest { core.endRequest(abandoned, reason: nil) }
        }
        core.openConnections.subtract(1, ordering: .acquiringAndReleasing)
    default:
        break
    }
}

/// MHD's error log: one formatted line to the caller's log handler.
func mhdLog(_ closure: UnsafeMutableRawPointer?, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?) {
    guard let closure, let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 1024)
    let length = Int(vsnprintf(&buffer, buffer.count, format, arguments))
    guard length >= 0 else { return }
    var bytes = buffer.prefix(min(length, buffer.count - 1)).map { UInt8(bitPattern: $0) }
    while let last = bytes.last, last == 10 || last == 13 || last == 32 { bytes.removeLast() }
    let line = String(decoding: bytes, as: UTF8.self)
    // The handler returns MHD_NO only after logging why; MHD's generic line for it would say the same, wrongly.
    if line.hasPrefix("Application reported internal error") { return }
    ServerCore.from(closure).log(withoutRequestTargets(line))
}

/// An MHD error line without the request target it quotes (`` `/v1/accounts/bob@example.com/donations' ``, the
/// path decoded): the log names routes, never paths, which hold account and conversation names. What MHD quotes
/// otherwise (a header's name: `` `Host' ``) stays. A target is what MHD quotes after "request for " (its words for
/// one, whatever the target looks like: MHD serves `v1/accounts/bob/donations` without its leading slash), or a
/// quoted text that starts as a target does or holds a `/` and no space, as no header name nor error text does. It
/// is cut from its backquote to the last quote of the line, so that a quote inside the path cannot end the cut
/// early, or to the end of the line when the line was cut short before its closing quote (a long path).
package func withoutRequestTargets(_ line: String) -> String {
    var searched = line.startIndex
    while let open = line[searched...].firstIndex(of: "`") {
        let quoted = line[line.index(after: open)...]
        let isTarget =
            line[..<open].hasSuffix("request for ") || quoted.hasPrefix("/") || quoted.hasPrefix("*")
            || quoted.lowercased().hasPrefix("http") || looksLikeAPath(quoted.prefix(while: { $0 != "'" }))
        guard isTarget else {
            searched = line.index(after: open)
            continue
        }
        let rest = line.lastIndex(of: "'").flatMap { $0 > open ? line[line.index(after: $0)...] : nil } ?? ""
        return String(line[..<open]) + "(the request's target)" + String(rest)
    }
    return line
}

/// Whether a quoted text is a path: a `/` in it and no space (MHD's quoted error texts, such as
/// `Input/output error`, have spaces; a request target cannot).
private func looksLikeAPath(_ text: Substring) -> Bool { text.contains("/") && !text.contains(" ") }
