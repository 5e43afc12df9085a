import CSystem
import SuggestCore

/// The API keys a server accepts, each opening one tenant: `{"keys": [{"tenant": "acme", "key": "SECRET"}]}`.
///
/// A key is found by its hash, under a seed drawn at random for each process (Swift's `Hasher`), then compared with
/// the keys of that hash in constant time: how long a refusal takes depends on the length of what was presented,
/// and on whether its hash is some key's, which without the seed says nothing about the keys.
public struct KeyRing: Sendable, Equatable {
    /// One key and the tenant it opens.
    public struct Entry: Sendable, Equatable {
        /// The tenant the key opens.
        public var tenant: String
        var key: [UInt8]

        /// An entry; `key` is kept as its UTF-8 bytes, and never shown.
        public init(tenant: String, key: String) {
            self.tenant = tenant
            self.key = Array(key.utf8)
        }
    }

    /// The keys, in the order of the file.
    public let entries: [Entry]

    /// How many tenants the keys open: counted once, since every export asks it (with 14,000 keys, counting them
    /// at each took most of a server's CPU under exports, inside the lock every request's key is checked under).
    public let tenantCount: Int

    /// The entries' indexes by the hash of their key. Comparing the presented key with every key would cost an
    /// unauthenticated request O(k · n): 49 ms for a 256-byte key against 20,000 keys (measured, debug build), so
    /// that 40 such requests a second would keep two cores busy.
    private let indexesByHash: [Int: [Int]]

    /// The longest key, in the file and as presented: far more than a random key needs (48 hex digits).
    public static let maximumKeyBytes = 256

    /// A ring of these keys, as given: `init(json:name:)` is the one that checks them.
    public init(entries: [Entry]) {
        self.entries = entries
        tenantCount = Set(entries.map(\.tenant)).count
        var indexes: [Int: [Int]] = [:]
        for (index, entry) in entries.enumerated() { indexes[Self.hash(entry.key), default: []].append(index) }
        indexesByHash = indexes
    }

    public static func == (lhs: KeyRing, rhs: KeyRing) -> Bool { lhs.entries == rhs.entries }

    private static func hash(_ key: [UInt8]) -> Int {
        var hasher = Hasher()
        hasher.combine(key.count)
        key.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    /// What the log says of a keys file that lists no key, at start or at a reload.
    static let noKeyWarning = "the file lists no key: every request that needs one is refused (401)"

    /// A keys file as `load(path:)` read it.
    public struct LoadedFile: Sendable, Equatable {
        /// The keys it holds.
        public var ring: KeyRing
        /// Which version of the file it was: another one is read again.
        public var version: FileVersion
        /// What is weak about it, each a line for the log: other users may read it, or a key is short. Warned
        /// about, not refused: the contract's own example of the file (`"key": "SECRET"`, written with the usual
        /// umask) is a file a server must start with.
        public var warnings: [String] = []
    }

    /// A key shorter than this is served, with a warning: a random key has 24 bytes or more.
    public static let advisedKeyBytes = 16

    /// What tells one version of a file from the next: its inode (a file renamed into place), its size, and the
    /// times of its last change of content and of status (a `chmod` that makes a refused file usable changes only
    /// the second; a copy that keeps the old modification time changes the inode or the status time).
    public struct FileVersion: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        }

        /// The version of the file at `path` now, or `nil` when it cannot be read.
        public static func of(path: String) -> FileVersion? {
            try? look(at: path).get()
        }

        /// The version of the file at `path` now, or the `errno` of the `stat` that failed.
        static func look(at path: String) -> Result<FileVersion, ErrorCode> {
            var info = stat()
            guard stat(path, &info) == 0 else { return .failure(ErrorCode(number: system_errno())) }
            return .success(FileVersion(info))
        }

        /// An `errno` value, as an error.
        struct ErrorCode: Error {
            var number: Int32
        }
    }

    /// The tenant a presented key opens, or `nil`.
    /// - Complexity: O(n) for a presented key of n bytes, whatever the number of keys; a key longer than any key
    ///   may be (`maximumKeyBytes`, whatever the file holds) is refused at once (a 60 KB one against 25,000 keys
    ///   took 2.5 s to refuse).
    public func tenant(forKey presented: some Collection<UInt8>) -> String? {
        guard presented.count <= Self.maximumKeyBytes else { return nil }
        var found: String?
        let presented = Array(presented)
        for index in indexesByHash[Self.hash(presented)] ?? [] {
            let entry = entries[index]
            if Self.constantTimeEqual(presented, entry.key) && found == nil { found = entry.tenant }
        }
        return found
    }

    /// Whether two byte strings are equal, in a time that depends only on the length of `presented`.
    static func constantTimeEqual(_ presented: [UInt8], _ secret: [UInt8]) -> Bool {
        guard !secret.isEmpty else { return false }
        var difference = UInt8(presented.count == secret.count ? 0 : 1)
        for index in presented.indices { difference |= presented[index] ^ secret[index % secret.count] }
        return difference == 0
    }

    /// A tenant's name: letters, digits, `.`, `_` and `-`, 1 to 64 of them. It prefixes the tenant's accounts in the
    /// store (`acme:alice`), so it may not hold the `:` that ends it.
    public static func isValidTenant(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    /// Reads a keys document. A byte-order mark at its start (an editor on Windows writes one) is dropped, as from a
    /// request's body.
    /// - Throws: `KeyRingError` naming what is wrong: not JSON, no `keys` array, an entry without a valid tenant or
    ///   a key (printable, without spaces, up to `maximumKeyBytes`), a key given twice.
    /// - Parameter allowingNoKey: a list of no key is a ring that opens nothing (a reload that revokes every key);
    ///   otherwise it is refused (a server started with such a file would answer every tenant's request with 401).
    public init(json bytes: [UInt8], name: String, allowingNoKey: Bool = false) throws(KeyRingError) {
        let document: JSONValue
        do {
            let text = Routes.withoutByteOrderMark(bytes)
            document = try text.withUnsafeBufferPointer { buffer throws(JSONParser.Error) in
                try JSONParser.parse(bytes: buffer)
            }
        } catch {
            throw KeyRingError("\(name) is not JSON (\(error)); it holds {\"keys\": [{\"tenant\": \"acme\", \"key\": \"...\"}]}")
        }
        // A repeated member is refused, not read as its last value: `{"tenant": "acme", "key": ..., "tenant":
        // "globex"}` reads as acme's key to a person, and opened globex's accounts.
        if let repeated = document.repeatedMemberName {
            throw KeyRingError("\(name) gives \"\(repeated)\" twice; give each member once")
        }
        guard case .array(let keys)? = document["keys"] else { throw KeyRingError("\(name) has no \"keys\" array; it holds {\"keys\": [{\"tenant\": \"acme\", \"key\": \"...\"}]}") }
        var entries: [Entry] = []
        var seen: Set<[UInt8]> = []
        for (index, key) in keys.enumerated() {
            if let repeated = key.repeatedMemberName {
                throw KeyRingError("\(name): keys[\(index)] gives \"\(repeated)\" twice; give each member once")
            }
            guard case .string(let tenant)? = key["tenant"], case .string(let secret)? = key["key"] else { throw KeyRingError("\(name): keys[\(index)] needs a \"tenant\" and a \"key\", both strings") }
            guard Self.isValidTenant(tenant) else {
                throw KeyRingError(
                    "\(name): keys[\(index)].tenant must be 1 to 64 letters, digits, '.', '_' or '-'")
            }
            guard (1...Self.maximumKeyBytes).contains(secret.utf8.count),
                secret.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else {
                throw KeyRingError(
                    "\(name): keys[\(index)].key must be 1 to \(Self.maximumKeyBytes) printable characters without "
                        + "spaces (a random one: openssl rand -hex 24)")
            }
            guard seen.insert(Array(secret.utf8)).inserted else {
                throw KeyRingError("\(name): keys[\(index)] repeats an earlier key; each key opens one tenant")
            }
            entries.append(Entry(tenant: tenant, key: secret))
        }
        guard !entries.isEmpty || allowingNoKey else {
            throw KeyRingError("\(name) lists no key; without keys, leave out --keys")
        }
        self.init(entries: entries)
    }

    /// Reads the keys file at `path`, with a warning when other users can read or write it, or a key is short.
    /// - Returns: the keys, with the version of the file they were read from.
    /// - Throws: `KeyRingError` when the file cannot be read or does not parse.
    public static func load(path: String, allowingNoKey: Bool = false) throws(KeyRingError) -> LoadedFile {
        // Without blocking: a FIFO put in the file's place would hold the opening thread (the signal thread, on
        // SIGHUP) until someone wrote to it, and SIGTERM with it. It is refused below, as not a regular file.
        let descriptor = system_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = system_errno()
            throw KeyRingError(
                "cannot read the keys file \(path): \(ErrorNumber.describe(code))",
                momentary: !ErrorNumber.blamesThePath(code))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, system_is_regular_file(info.st_mode) != 0 else {
            throw KeyRingError("the keys file \(path) is not a regular file")
        }
        let version = FileVersion(info)
        var warnings: [String] = []
        if info.st_mode & 0o077 != 0 {
            warnings.append(
                "the keys file \(path) can be read or written by other users (mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "make it private: chmod 600 \(path)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && system_errno() == EINTR { continue }
            guard count >= 0 else {
                throw KeyRingError(
                    "cannot read the keys file \(path): \(ErrorNumber.describeLast())", momentary: true)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= 1 << 20 else { throw KeyRingError("the keys file \(path) is over 1 MiB") }
        }
        let ring: KeyRing
        do {
            ring = try KeyRing(json: bytes, name: path, allowingNoKey: allowingNoKey)
        } catch {
            throw KeyRingError(error.description, version: version)
        }
        for (index, entry) in ring.entries.enumerated() where entry.key.count < advisedKeyBytes {
            warnings.append(
                "\(path): keys[\(index)].key (tenant \(entry.tenant)) has \(entry.key.count) characters; a key that "
                    + "cannot be guessed has \(advisedKeyBytes) or more (openssl rand -hex 24)")
        }
        return LoadedFile(ring: ring, version: version, warnings: warnings)
    }
}

/// Why a keys file cannot be used.
public struct KeyRingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the file and what to do, in one line.
    public var description: String
    /// The version of the file that was refused, when it could be opened: a later version is read again.
    public var version: KeyRing.FileVersion?
    /// Whether the system failed to read the file (no descriptor or memory left, an I/O error), not the file
    /// itself: the same file may be read a moment later, so no version of it is refused.
    public var isMomentary: Bool
    init(_ description: String, version: KeyRing.FileVersion? = nil, momentary: Bool = false) {
        self.description = description
        self.version = version
        isMomentary = momentary
    }
}
