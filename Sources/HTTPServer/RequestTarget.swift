/// A request target split into its path and query, each part percent-decoded.
///
/// The target comes from MHD before MHD decodes anything (its URI callback), so `%2F` in a segment stays inside the
/// segment and the query can be decoded with `+` as a space. An absolute-form target (`http://host/path`) is read
/// from its path on; `*` (for `OPTIONS *`) has no segment.
struct RequestTarget {
    var path: String
    var segments: [String]
    var query: String?
    var items: [HTTPQueryItem]

    /// Splits and decodes `target`.
    /// - Throws: `HTTPServerError` when a decoded segment, name or value is not UTF-8.
    /// - Complexity: O(*n*) in the target's length.
    init(_ target: String) throws(HTTPServerError) {
        let parse = { (bytes: UnsafeBufferPointer<UInt8>) in
            Result { () throws(HTTPServerError) in try RequestTarget(bytes: bytes) }
        }
        if let parsed = target.utf8.withContiguousStorageIfAvailable(parse) {
            self = try parsed.get()
        } else {
            self = try Array(target.utf8).withUnsafeBufferPointer(parse).get()
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) throws(HTTPServerError) {
        try RequestTarget.checkCharacters(bytes)
        let end = bytes.count
        var start = 0
        if let afterScheme = RequestTarget.afterAbsoluteScheme(bytes) {
            start = afterScheme
            while start < end && bytes[start] != slash && bytes[start] != question { start += 1 }
        }
        var pathEnd = start
        while pathEnd < end && bytes[pathEnd] != question { pathEnd += 1 }
        let queryEnd = end

        let pathBytes = UnsafeBufferPointer(rebasing: bytes[start..<pathEnd])
        path = pathBytes.isEmpty ? "/" : String(decoding: pathBytes, as: UTF8.self)
        segments = []
        var rest = pathBytes.first == slash ? UnsafeBufferPointer(rebasing: pathBytes.dropFirst()) : pathBytes
        if pathBytes.count == 1 && pathBytes[0] == asterisk { rest = UnsafeBufferPointer(rebasing: rest[0..<0]) }
        if !rest.isEmpty {
            var segmentStart = 0
            for index in 0...rest.count where index == rest.count || rest[index] == slash {
                let raw = UnsafeBufferPointer(rebasing: rest[segmentStart..<index])
                segments.append(try RequestTarget.decode(raw, plusIsSpace: false, what: "a path segment"))
                segmentStart = index + 1
            }
        }

        query = nil
        items = []
        if queryEnd > pathEnd {
            let queryBytes = UnsafeBufferPointer(rebasing: bytes[(pathEnd + 1)..<queryEnd])
            query = String(decoding: queryBytes, as: UTF8.self)
            var pieceStart = 0
            var index = 0
            while index <= queryBytes.count {
                if index == queryBytes.count || queryBytes[index] == ampersand {
                    if index > pieceStart {
                        let piece = UnsafeBufferPointer(rebasing: queryBytes[pieceStart..<index])
                        let equals = piece.firstIndex(of: equalsSign) ?? piece.count
                        let name = try RequestTarget.decode(
                            UnsafeBufferPointer(rebasing: piece[0..<equals]), plusIsSpace: true, what: "a query name")
                        let value =
                            equals < piece.count
                            ? try RequestTarget.decode(
                                UnsafeBufferPointer(rebasing: piece[(equals + 1)...]), plusIsSpace: true,
                                what: "the value of query item \"\(name)\"")
                            : ""
                        items.append(HTTPQueryItem(name: name, value: value))
                    }
                    pieceStart = index + 1
                }
                index += 1
            }
        }
    }

    /// Refuses a target that a client did not percent-encode: one part read two ways is how a request names
    /// something else than its sender meant. A raw `#` would start a fragment, which no client sends (RFC 9112
    /// §3.2), so it is a name that was not encoded (`team#1` read as `team` deleted the account `team`); a `%` that
    /// two hex digits do not follow makes `a%` and `a%25` one name; spaces, control characters and `"<>` are
    /// encoded by every client that follows the URL standard. `\^`{|}`, which RFC 3986 leaves out too, are not
    /// ambiguous here and browsers and `fetch` send them raw (`exclude=a|b`): taken as they are, as are bytes above
    /// 0x7F (UTF-8 sent unencoded).
    private static func checkCharacters(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPServerError) {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == hash {
                throw HTTPServerError(
                    "the request target holds a raw '#', which would end it there; percent-encode it (%23) in a name")
            }
            if byte == percent {
                guard index + 2 < bytes.count, hexValue(bytes[index + 1]) != nil, hexValue(bytes[index + 2]) != nil
                else {
                    throw HTTPServerError(
                        "the request target holds a '%' not followed by two hexadecimal digits; write '%' in a name as %25")
                }
                index += 3
                continue
            }
            if byte <= space || byte == 0x7F || notSentRaw.contains(byte) {
                throw HTTPServerError(
                    "the request target holds a space, a control character, '\"', '<' or '>' unencoded; percent-encode it")
            }
            index += 1
        }
    }

    /// Where the authority starts in an absolute-form target (`http://` or `https://`, any case), or `nil`.
    private static func afterAbsoluteScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.first != slash else { return nil }
        for scheme in [Array("http://".utf8), Array("https://".utf8)] where bytes.count >= scheme.count {
            if scheme.indices.allSatisfy({ bytes[$0] | (bytes[$0] >= 65 && bytes[$0] <= 90 ? 0x20 : 0) == scheme[$0] })
            {
                return scheme.count
            }
        }
        return nil
    }

    /// Percent-decodes `raw`: `%` and two hex digits is that byte (the target was checked to hold no other `%`);
    /// `+` is a space in a query.
    /// - Throws: `HTTPServerError` when the decoded bytes are not UTF-8, or hold a NUL (`%00`): no name or value
    ///   may (a donation's strings may not), and an account named with one was stored but not exported in a form
    ///   that imports again.
    static func decode(_ raw: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool, what: String) throws(HTTPServerError)
        -> String
    {
        // The target itself is valid UTF-8, so a part with nothing to decode is too.
        guard raw.contains(where: { $0 == percent || (plusIsSpace && $0 == plus) }) else {
            return String(decoding: raw, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            if byte == percent, index + 2 < raw.count, let high = hexValue(raw[index + 1]),
                let low = hexValue(raw[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
                continue
            }
            decoded.append(plusIsSpace && byte == plus ? space : byte)
            index += 1
        }
        guard let text = String(validating: decoded, as: UTF8.self) else {
            throw HTTPServerError(
                "\(what) of the request target is not UTF-8 once percent-decoded; percent-encode UTF-8 text only")
        }
        guard !decoded.contains(0) else {
            throw HTTPServerError("\(what) of the request target holds a NUL character (%00), which no name or value may")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}

private let slash = UInt8(ascii: "/")
private let question = UInt8(ascii: "?")
private let hash = UInt8(ascii: "#")
private let ampersand = UInt8(ascii: "&")
private let equalsSign = UInt8(ascii: "=")
private let percent = UInt8(ascii: "%")
private let plus = UInt8(ascii: "+")
private let space = UInt8(ascii: " ")
private let asterisk = UInt8(ascii: "*")
private let notSentRaw = Set("\"<>".utf8)
