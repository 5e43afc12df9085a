/// The conformance tree of uniform type identifiers: which types a type is a kind of.
///
/// Conformance is reflexive and transitive: `public.jpeg` conforms to `public.jpeg`, `public.image`,
/// `public.data`, `public.item` and `public.content`. The public tree comes from Apple's `UTCoreTypes.h`; a target
/// may declare its own types on top (`declaring(_:conformsTo:)`), as an app's Info.plist does with
/// `UTExportedTypeDeclarations`. Identifiers compare case-insensitively, as on Apple's systems.
public struct UniformTypeTree: Sendable {
    /// Each type's direct parents, lowercased; `nil` for the public tree alone, which is then built on the first
    /// look-up: every command opens its store with `.standard`, and most (`list` without `--content-type`) never
    /// ask it anything.
    private var declared: [String: [String]]?

    private var parents: [String: [String]] { declared ?? UniformTypeTree.publicParents }

    /// The public types.
    public static let standard = UniformTypeTree(declared: nil)

    /// The public types and their direct parents.
    private static let publicParents = lowercased([
        "public.item": [], "public.content": [],
        "public.data": ["public.item"],
        "public.composite-content": ["public.content"],
        "public.text": ["public.data", "public.content"],
        "public.plain-text": ["public.text"],
        "public.utf8-plain-text": ["public.plain-text"],
        "public.utf16-plain-text": ["public.plain-text"],
        "public.rtf": ["public.text"],
        "public.html": ["public.text"], "public.xml": ["public.text"], "public.json": ["public.text"],
        "public.source-code": ["public.plain-text"],
        "public.url": ["public.data"],
        "public.file-url": ["public.url"],
        "public.image": ["public.data", "public.content"],
        "public.jpeg": ["public.image"], "public.png": ["public.image"], "public.tiff": ["public.image"],
        "com.compuserve.gif": ["public.image"],
        // Not in the header; the heif family is an image format and is treated as one (see share-flow.md §3).
        "public.heif-standard": ["public.image"],
        "public.heic": ["public.heif-standard"], "public.heif": ["public.heif-standard"],
        "public.audiovisual-content": ["public.data", "public.content"],
        "public.movie": ["public.audiovisual-content"], "public.audio": ["public.audiovisual-content"],
        "public.video": ["public.movie"], "public.mpeg-4": ["public.movie"],
        "com.apple.quicktime-movie": ["public.movie"],
        "public.mpeg-4-audio": ["public.mpeg-4", "public.audio"],
        "public.mp3": ["public.audio"],
        "com.adobe.pdf": ["public.data", "public.composite-content"],
        "public.contact": ["public.item"],
        "public.vcard": ["public.text", "public.contact"],
        "com.apple.property-list": ["public.data"],
        "com.apple.xml-property-list": ["public.xml", "com.apple.property-list"],
        "com.apple.live-photo": [],
        "com.apple.pkpass": ["public.data"],
        "com.apple.active-webpage": [],
        "public.archive": ["public.data"],
        "public.zip-archive": ["public.archive"],
    ])

    /// A tree of exactly these types, without the public ones (`standard.declaring(_:conformsTo:)` adds to those).
    /// - Parameter parents: each type's direct parents (a type named only as a parent has none of its own); case does
    ///   not matter.
    public init(parents: [String: [String]]) {
        declared = UniformTypeTree.lowercased(parents)
    }

    private init(declared: [String: [String]]?) {
        self.declared = declared
    }

    private static func lowercased(_ parents: [String: [String]]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for (type, direct) in parents { result[type.lowercased()] = direct.map { $0.lowercased() } }
        return result
    }

    /// A tree with one more type (or more parents for a known one).
    public func declaring(_ type: String, conformsTo direct: [String]) -> UniformTypeTree {
        declaring([(type, direct)])
    }

    /// A tree with more types (or more parents for known ones), in one copy of the tree: one copy a declaration
    /// made 80,000 of them take 41 s.
    public func declaring(_ declarations: [(type: String, parents: [String])]) -> UniformTypeTree {
        var parents = self.parents
        for (type, direct) in declarations {
            parents[type.lowercased(), default: []].append(contentsOf: direct.map { $0.lowercased() })
        }
        return UniformTypeTree(declared: parents)
    }

    /// For each of `ancestors`, every type of the tree that conforms to it, itself included, lowercased: one walk
    /// down from each, for a caller that asks the same question of many types (a type the tree does not know
    /// conforms only to itself).
    /// - Complexity: O(a · l) for a ancestors and l parent links in the tree.
    public func conformingTypes(toEach ancestors: [String]) -> [Set<String>] {
        var children: [String: [String]] = [:]
        for (type, direct) in parents {
            for parent in direct { children[parent, default: []].append(type) }
        }
        return ancestors.map { ancestor in
            let root = ancestor.lowercased()
            var found: Set<String> = [root]
            var pending = [root]
            while let next = pending.popLast() {
                for child in children[next] ?? [] where found.insert(child).inserted { pending.append(child) }
            }
            return found
        }
    }

    /// Whether the tree knows `type`.
    public func isDeclared(_ type: String) -> Bool { parents[type.lowercased()] != nil }

    /// Whether `type` conforms to `ancestor`: it is the same type or descends from it.
    /// - Complexity: O(d) in the number of types above `type`; the tree is shallow.
    public func conforms(_ type: String, to ancestor: String) -> Bool {
        var steps = 0
        return conforms(type, to: ancestor, steps: &steps)
    }

    /// `conforms(_:to:)`, adding to `steps` the types it looked at: a budget's measure of the walk, which a
    /// target's own declarations may make long.
    public func conforms(_ type: String, to ancestor: String, steps: inout Int) -> Bool {
        let parents = self.parents  // once, not once per step
        let target = ancestor.lowercased()
        var pending = [type.lowercased()]
        var visited: Set<String> = []
        while let next = pending.popLast() {
            steps += 1
            if next == target { return true }
            guard visited.insert(next).inserted else { continue }
            pending.append(contentsOf: parents[next] ?? [])
        }
        return false
    }

    /// Whether `lhs` and `rhs` name the same type (`UTTypeEqual`).
    public func equals(_ lhs: String, _ rhs: String) -> Bool { lhs.lowercased() == rhs.lowercased() }

    /// The broad kinds that the ranker keeps a separate score for, in the order they are tried.
    public static let contentKinds = [
        "public.image", "public.movie", "public.audio", "com.adobe.pdf", "public.file-url", "public.url",
        "public.contact", "public.text",
    ]

    /// The broad kind of content a type belongs to, such as `public.image` for `public.jpeg`: conversations that
    /// received a JPEG rise when a PNG is shared. A type outside every kind is its own kind.
    public func contentKind(of type: String) -> String {
        UniformTypeTree.contentKinds.first { conforms(type, to: $0) } ?? type.lowercased()
    }

    /// The distinct kinds of `types`, in the order they first appear.
    public func contentKinds(of types: [String]) -> [String] {
        // Distinct by bytes, as `ContentSums` keys them.
        var seen: Set<ByteKey> = []
        return types.map(contentKind(of:)).filter { seen.insert(ByteKey($0)).inserted }
    }

    /// Why `identifier` is not a uniform type identifier, or `nil` when it is one: the rule every way in applies
    /// (a share's attachments, a query's content types, on the command line and over HTTP).
    ///
    /// Apple allows ASCII letters and digits, `-`, `.` and characters above U+007F; a UTI has no spaces or `=`.
    /// - Complexity: O(n).
    public static func problem(withTypeIdentifier identifier: String) -> String? {
        guard !identifier.isEmpty else { return "the type identifier is empty" }
        guard identifier.utf8.count <= 1024 else { return "the type identifier is longer than 1024 bytes" }
        for scalar in identifier.unicodeScalars {
            let allowed =
                (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
                || (scalar >= "0" && scalar <= "9") || scalar == "-" || scalar == "." || scalar.value > 0x7F
            if !allowed {
                return "\"\(identifier.prefix(60))\" is not a uniform type identifier (it contains "
                    + "'\(scalar.escaped(asASCII: true))'; use letters, digits, '-' and '.', as in public.jpeg)"
            }
        }
        return nil
    }
}
