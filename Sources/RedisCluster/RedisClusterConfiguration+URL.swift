extension RedisClusterConfiguration {
    /// Reads the contract's URL form: `redis://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT...]`.
    ///
    /// The user name and password may be %-encoded (`%40` for `@`); the last `@` ends them, so a password that holds
    /// a raw `@` works too. A port left out is 6379. A trailing `/` or `/0` is accepted; other database numbers are
    /// not, since a Redis Cluster has only database 0. IPv6 hosts are written in brackets, `[::1]:7000`.
    /// - Parameter url: the URL, for example `redis://:secret@127.0.0.1:7000,127.0.0.1:7001`.
    /// - Throws: ``RedisError/invalidConfiguration(_:)`` saying which part is wrong, with the password masked.
    public init(url: String) throws(RedisError) {
        let lowered = url.lowercased()
        if lowered.hasPrefix("rediss://") {
            throw .invalidConfiguration("TLS (rediss://) is not supported: use redis://HOST:PORT")
        }
        guard lowered.hasPrefix("redis://") else {
            throw .invalidConfiguration(
                "'\(RedisClusterConfiguration.masked(url))' is not a redis:// URL:"
                    + " write redis://HOST:PORT[,HOST:PORT...]"
            )
        }
        var rest = Substring(url).dropFirst("redis://".count)
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = userInfo.firstIndex(of: ":") else {
                throw .invalidConfiguration(
                    "the URL names a user but no password: write redis://:PASSWORD@HOST:PORT or"
                        + " redis://USER:PASSWORD@HOST:PORT")
            }
            let user = userInfo[..<colon]
            let secret = userInfo[userInfo.index(after: colon)...]
            guard !secret.isEmpty else {
                throw .invalidConfiguration("the password in the URL is empty: write redis://:PASSWORD@HOST:PORT")
            }
            if !user.isEmpty { username = try RedisClusterConfiguration.percentDecoded(user, what: "user name") }
            password = try RedisClusterConfiguration.percentDecoded(secret, what: "password")
        }
        if let query = rest.firstIndex(of: "?") {
            throw .invalidConfiguration(
                "the URL has options ('\(rest[query...])'), which are not supported: remove them")
        }
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            guard path.isEmpty || path == "0" else {
                throw .invalidConfiguration(
                    "the URL names database '\(path)', but only database 0 is supported (a Redis Cluster has no"
                        + " other): remove /\(path)")
            }
            rest = rest[..<slash]
        }
        guard !rest.isEmpty else {
            throw .invalidConfiguration("the URL names no server: write redis://HOST:PORT[,HOST:PORT...]")
        }
        var seeds: [RedisEndpoint] = []
        for item in rest.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty else {
                throw .invalidConfiguration(
                    "the URL's address list has an empty entry: separate HOST:PORT by one comma")
            }
            guard let endpoint = RedisEndpoint(parsing: item) else {
                throw .invalidConfiguration(
                    "'\(item)' is not HOST:PORT with a port in 1...65535 (IPv6 as [ADDRESS]:PORT)")
            }
            if !seeds.contains(endpoint) { seeds.append(endpoint) }
        }
        self.init(seeds: seeds, username: username, password: password)
    }

    /// The URL with its password replaced by `***`, for messages.
    static func masked(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://"), let at = url.lastIndex(of: "@") else { return url }
        let userInfo = url[schemeEnd.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
    }

    /// `%XX` sequences decoded; the result must be UTF-8.
    private static func percentDecoded(_ text: Substring, what: String) throws(RedisError) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw .invalidConfiguration(
                    "the \(what) in the URL has a '%' not followed by two hex digits (write a '%' itself as %25)")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw .invalidConfiguration("the \(what) in the URL is not UTF-8 once its %-escapes are decoded")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
