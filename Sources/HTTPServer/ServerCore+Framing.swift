import CMicroHTTPD
import CSystem

/// Reading a request's head as MHD parsed it: its header fields, how long its body is, and whether its framing is
/// ambiguous (a request another hop could read otherwise is refused, never guessed at).
extension ServerCore {
    /// The request's header fields, as MHD read them.
    func headerFields(_ connection: OpaquePointer) -> [HTTPHeader] {
        var fields: [HTTPHeader] = []
        _ = withUnsafeMutablePointer(to: &fields) { pointer in
            MHD_get_connection_values_n(connection, .HEADER_KIND, collectHeader, pointer)
        }
        return fields
    }

    /// Why a request's header fields make it malformed, or `nil`: an HTTP/1.1 request without exactly one `Host`
    /// (RFC 9112, 3.2: a server answers 400), or a field that takes one value given twice (`Host`,
    /// `Content-Type`, `Authorization`), which two readers (a proxy and this server) could each take differently:
    /// the first was taken, where a proxy may have checked the second.
    static func headerProblem(_ request: HTTPRequest) -> String? {
        let hosts = request.headers.values(for: "host").count
        if (request.version.major, request.version.minor) >= (1, 1) && hosts != 1 {
            return "an HTTP/1.1 request carries one Host header field (RFC 9112, 3.2); this one has \(hosts)"
        }
        for name in ["Host", "Content-Type", "Authorization"] {
            let count = request.headers.values(for: name).count
            if count > 1 { return "the header field \(name) is given \(count) times; send it once" }
        }
        return nil
    }

    /// Whether the request asks for `100 Continue` before it sends its body.
    func expectsContinue(_ connection: OpaquePointer) -> Bool {
        guard let value = lookUp("Expect", on: connection) else { return false }
        return String(cString: value).lowercased().contains("100-continue")
    }

    /// Why the request's body has no single length, if it has none: a field name that is not a token (it may hide
    /// a framing field), several `Content-Length` fields (MHD would take the first), or one beside
    /// `Transfer-Encoding` (RFC 9112, 6.3: a request a server may reject, and should when it cannot be sure every
    /// hop framed it alike), or a transfer coding other than `chunked` alone, which MHD cannot delimit.
    /// - Returns: the error's code (`invalid_header` for a field name, else `ambiguous_length`) and its message.
    func framingAmbiguity(_ connection: OpaquePointer) -> (code: String, message: String)? {
        var counts = FramingFields()
        _ = withUnsafeMutablePointer(to: &counts) { pointer in
            MHD_get_connection_values_n(connection, .HEADER_KIND, countFramingField, pointer)
        }
        // MHD 0.9.75 joins a folded line to the field's *name*: `Content-Length: 24` then ` 0` became a field
        // `Content-Length0`, the body was read as the next request (a `DELETE` smuggled in it ran), and a folded
        // `Authorization` put the key into the name, which the message below showed. RFC 9112, 5.2: refuse.
        if counts.folded {
            return (
                "invalid_header",
                "a header field is folded onto a line that begins with a space or a tab; send each field on one line"
            )
        }
        // `Transfer-Encoding : chunked` (a space before the colon) reached the handler as a field MHD never framed
        // by, so its chunks were read as the next request: RFC 9112, 5.1, says to refuse such a request. The name
        // is not shown: a malformed one may hold a key.
        if let end = counts.lastValueEnd, !endsItsLine(end, nextKey: nil) { counts.nulInValue = true }
        if counts.nulInValue {
            return ("invalid_header", "a header field's value holds a NUL byte; send none")
        }
        if counts.malformedName {
            return (
                "invalid_header",
                "a header field name holds a character a field name may not have (a space before the colon?)"
            )
        }
        let code = "ambiguous_length"
        if counts.contentLengths > 1 {
            return (code, "the request has \(counts.contentLengths) Content-Length fields; send one")
        }
        if counts.contentLengths > 0 && counts.transferEncodings > 0 {
            return (code, "the request has both Content-Length and Transfer-Encoding; send one")
        }
        if counts.transferEncodings > 1 {
            return (code, "the request has \(counts.transferEncodings) Transfer-Encoding fields; send one")
        }
        // MHD frames a body by chunks only for exactly `chunked`; any other coding (`gzip, chunked`, `identity`)
        // left it waiting for a body it could not delimit until the connection's timeout.
        if let coding = lookUp("Transfer-Encoding", on: connection), !ServerCore.isChunkedAlone(coding) {
            return (
                code,
                "Transfer-Encoding \(String(String(cString: coding).prefix(40))) is not supported: send the body "
                    + "with Content-Length or Transfer-Encoding: chunked alone"
            )
        }
        return nil
    }

    /// Whether a `Transfer-Encoding` value is `chunked` as MHD reads it: that word in any ASCII case after leading
    /// spaces or tabs, and nothing else (a trailing space is not MHD's `chunked`).
    static func isChunkedAlone(_ value: UnsafePointer<CChar>) -> Bool {
        var start = value
        while start.pointee == 32 || start.pointee == 9 { start += 1 }
        return strcasecmp(start, "chunked") == 0
    }

    /// The declared `Content-Length`, 0 without one, `Int.max` past `Int.max` (MHD has refused a malformed one).
    func declaredLength(_ connection: OpaquePointer) -> Int {
        guard let text = lookUp("Content-Length", on: connection) else { return 0 }
        var value = 0
        var index = 0
        while text[index] != 0 {
            let digit = Int(text[index]) - 48
            guard (0...9).contains(digit) else { return value }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(digit)
            if overflowTimes || overflowSum { return Int.max }
            value = sum
            index += 1
        }
        return value
    }

    func lookUp(_ name: StaticString, on connection: OpaquePointer) -> UnsafePointer<CChar>? {
        name.withUTF8Buffer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                MHD_lookup_connection_value(connection, .HEADER_KIND, chars.baseAddress)
            }
        }
    }
}

/// How many fields of a request's head say how long its body is.
private struct FramingFields {
    var contentLengths = 0
    var transferEncodings = 0
    /// Whether a field name has a byte a name may not hold (RFC 9110's `tchar`), as MHD passed it.
    var malformedName = false
    /// Whether a field was folded onto a next line (`valueFollowsName`).
    var folded = false
    /// Whether a field's value holds a NUL byte (`endsItsLine`).
    var nulInValue = false
    /// Where the last field's value ends, as MHD measured it (up to its first NUL).
    var lastValueEnd: UnsafeRawPointer?
}

/// Whether a field's value ended its line, from where MHD says it ends (`end`, its first NUL) and where the next
/// field's name begins (`nextKey`, `nil` after the last). MHD 0.9.75 ends a value at its first NUL, having ended
/// the line at its CR or LF: `Transfer-Encoding: chunked\0, gzip` was read as `chunked`, `Content-Length: 98\0 9`
/// as 98, where a proxy that turns the NUL into a space reads the request otherwise (RFC 9110, 5.5: refuse or
/// replace). MHD writes a NUL over the CR and one over the LF that end a line, so past a value's end comes another
/// NUL (CRLF), or the next field's name (a bare LF); else the NUL was the value's own.
private func endsItsLine(_ end: UnsafeRawPointer, nextKey: UnsafeRawPointer?) -> Bool {
    let after = end + 1
    return after.load(as: UInt8.self) == 0 || after == nextKey
}

/// Whether a field's value follows its name on the line MHD read them from: the name, the NUL MHD wrote over the
/// colon, only spaces or tabs, then the value. MHD 0.9.75 reads the head in place in the connection's buffer and
/// keeps the lines there; it joins a line that begins with a space or a tab (an obsolete line folding, RFC 9112,
/// 5.2) to the *name* of the field before it, in a block of its own, so a folded field's name no longer sits before
/// its value. (Looking past the value instead missed a fold behind a NUL in the value, which MHD ends the value at,
/// and took a body after bare LFs for a fold.)
private func valueFollowsName(key: UnsafePointer<CChar>, keySize: Int, value: UnsafePointer<CChar>) -> Bool {
    let colon = UnsafeRawPointer(key) + keySize
    let start = UnsafeRawPointer(value)
    // Beyond a head's largest size the two are in different blocks, whatever lies between them.
    guard start > colon, start - colon <= 16 << 20, colon.load(as: UInt8.self) == 0 else { return false }
    var byte = colon + 1
    while byte < start {
        let next = byte.load(as: UInt8.self)
        guard next == 32 || next == 9 else { return false }
        byte += 1
    }
    return true
}

/// MHD's iterator over a request's head fields, counting the framing ones into a `FramingFields`.
private func countFramingField(
    _ counts: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let counts, let key else { return .YES }
    let fields = counts.assumingMemoryBound(to: FramingFields.self)
    if let end = fields.pointee.lastValueEnd, !endsItsLine(end, nextKey: UnsafeRawPointer(key)) {
        fields.pointee.nulInValue = true
    }
    fields.pointee.lastValueEnd = value.map { UnsafeRawPointer($0) + valueSize }
    let name = UnsafeRawBufferPointer(start: key, count: keySize)
    if name.isEmpty || !name.allSatisfy(HTTPToken.allows) { fields.pointee.malformedName = true }
    if let value, !valueFollowsName(key: key, keySize: keySize, value: value) { fields.pointee.folded = true }
    if keySize == 14 && strncasecmp(key, "Content-Length", 14) == 0 {
        fields.pointee.contentLengths += 1
    } else if keySize == 17 && strncasecmp(key, "Transfer-Encoding", 17) == 0 {
        fields.pointee.transferEncodings += 1
    }
    return .YES
}

/// Collects one header field for `HTTPRequest.headers`.
private func collectHeader(
    _ fields: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let fields, let key else { return .YES }
    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
    var text = ""
    if let value {
        // MHD drops the whitespace before a value but keeps what follows it, which is not part of the value.
        var bytes = UnsafeRawBufferPointer(start: value, count: valueSize)
        while let last = bytes.last, last == 32 || last == 9 {
            bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast())
        }
        text = String(decoding: bytes, as: UTF8.self)
    }
    fields.assumingMemoryBound(to: [HTTPHeader].self).pointee.append(HTTPHeader(name: name, value: text))
    return .YES
}
