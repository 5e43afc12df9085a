import SuggestCore
import Testing

@testable import SuggestShare

#if canImport(Glibc)
    import Glibc
#endif
import SuggestTestSupport

@Suite("Hostile input gives errors, never crashes")
struct HostileInputTests {
    /// Parses and requires a `PropertyListError` whose message contains `fragment`, at `offset` when given.
    func expectBinaryError(
        _ bytes: [UInt8], _ fragment: String, at offset: Int? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let value = try PropertyListValue(parsing: bytes)
            Issue.record("parsed to \(value) instead of failing with \"\(fragment)\"", sourceLocation: sourceLocation)
        } catch {
            #expect(error.message.contains(fragment), "\(error)", sourceLocation: sourceLocation)
            if let offset { #expect(error.position == .byte(offset), "\(error)", sourceLocation: sourceLocation) }
        }
    }

    @Test("every truncation of a binary plist is refused")
    func truncated() throws {
        let bytes = try Fixtures.bytes("telegram.binary.plist")
        for length in 0..<bytes.count {
            #expect(throws: PropertyListError.self) { _ = try PropertyListValue(parsing: Array(bytes.prefix(length))) }
        }
    }

    @Test("a file too short for a header and trailer")
    func tooShort() {
        expectBinaryError(Array("bplist00".utf8) + [0x08], "too short", at: 9)
    }

    @Test("an unsupported version")
    func version() {
        var builder = BinaryPlistBuilder()
        builder.add([0x08])
        var bytes = builder.build()
        bytes[7] = UInt8(ascii: "1")
        expectBinaryError(bytes, "only bplist00", at: 6)
    }

    @Test("trailer fields out of range")
    func badTrailer() {
        var builder = BinaryPlistBuilder()
        builder.add([0x09])
        let good = builder.build()
        let trailer = good.count - 32
        var bytes = good
        bytes[trailer + 6] = 0
        expectBinaryError(bytes, "offset size is 0", at: trailer + 6)
        bytes = good
        bytes[trailer + 7] = 9
        expectBinaryError(bytes, "reference size is 9", at: trailer + 7)
        expectBinaryError(builder.build(objectCountOverride: UInt64.max), "cannot fit", at: trailer + 8)
        expectBinaryError(builder.build(objectCountOverride: 0), "cannot fit", at: trailer + 8)
        expectBinaryError(builder.build(top: 5), "top object 5", at: trailer + 16)
        expectBinaryError(builder.build(tableOffsetOverride: UInt64.max), "offset table offset", at: trailer + 24)
        expectBinaryError(builder.build(tableOffsetOverride: 2), "offset table offset", at: trailer + 24)
    }

    @Test("an object offset outside the object area")
    func badOffset() {
        var builder = BinaryPlistBuilder()
        builder.add([0x09])
        var bytes = builder.build()
        bytes[9] = 0xF0  // the offset table's only entry
        expectBinaryError(bytes, "outside the object area", at: 9)
    }

    @Test("huge counts are refused before anything is allocated")
    func hugeCounts() {
        for type: UInt8 in [0x4, 0x5, 0x6, 0xA, 0xD] {
            var builder = BinaryPlistBuilder()
            builder.add([type << 4 | 0x0F, 0x13] + BinaryPlistBuilder.bigEndian(UInt64(Int.max / 2), width: 8))
            expectBinaryError(builder.build(), "runs past the end", at: 8)
            var absurd = BinaryPlistBuilder()
            absurd.add([type << 4 | 0x0F, 0x13] + BinaryPlistBuilder.bigEndian(UInt64.max, width: 8))
            expectBinaryError(absurd.build(), "absurdly large", at: 9)
        }
    }

    @Test("an integer cut short is reported where its bytes start")
    func shortInteger() {
        var builder = BinaryPlistBuilder()
        builder.add([0x13, 0x00])
        expectBinaryError(builder.build(), "the integer runs past the end", at: 9)
    }

    @Test("a length that is not an integer object")
    func badLength() {
        var builder = BinaryPlistBuilder()
        builder.add([0x5F, 0x51, 0x41])
        expectBinaryError(builder.build(), "length must be an integer", at: 9)
    }

    @Test("reference cycles: an array holding itself, and two arrays holding each other")
    func cycles() {
        var selfCycle = BinaryPlistBuilder()
        selfCycle.add([0xA1, 0x00])
        expectBinaryError(selfCycle.build(), "reference cycle", at: 8)
        var mutual = BinaryPlistBuilder()
        mutual.add([0xA1, 0x01])
        mutual.add([0xA1, 0x00])
        expectBinaryError(mutual.build(), "reference cycle", at: 8)
        var throughDictionary = BinaryPlistBuilder()
        throughDictionary.add([0xD1, 0x01, 0x00])
        throughDictionary.add([0x51, 0x6B])
        expectBinaryError(throughDictionary.build(), "reference cycle", at: 8)
    }

    @Test("a reference past the object count")
    func danglingReference() {
        var builder = BinaryPlistBuilder()
        builder.add([0xA1, 0x07])
        expectBinaryError(builder.build(), "only 1", at: 9)
    }

    @Test("deep nesting, directly and through shared objects")
    func deepNesting() {
        var chain = BinaryPlistBuilder()
        chain.referenceSize = 2
        chain.offsetSize = 2
        for index in 0..<500 { chain.add([0xA1] + BinaryPlistBuilder.bigEndian(UInt64(index + 1), width: 2)) }
        chain.add([0x09])
        expectBinaryError(chain.build(), "nested deeper")
        // A chain of 100 parsed first, then reused under another chain of 100: each alone is within the limit.
        var shared = BinaryPlistBuilder()
        shared.referenceSize = 2
        shared.offsetSize = 2
        let top = shared.add([])
        for index in 1...100 { shared.add([0xA1] + BinaryPlistBuilder.bigEndian(UInt64(index + 1), width: 2)) }
        let leaf = shared.add([0x09])
        for index in 0..<100 {
            let next = index == 99 ? 1 : leaf + 2 + index
            shared.add([0xA1] + BinaryPlistBuilder.bigEndian(UInt64(next), width: 2))
        }
        shared.objects[top] = [0xA2] + shared.references([1, leaf + 1])
        expectBinaryError(shared.build(top: top), "nested deeper")
    }

    @Test("an expansion bomb: 40 levels of pairs of the same array")
    func expansionBomb() {
        var builder = BinaryPlistBuilder()
        for index in 0..<40 { builder.add([0xA2, UInt8(index + 1), UInt8(index + 1)]) }
        builder.add([0x09])
        expectBinaryError(builder.build(), "expands to more than")
    }

    @Test("a long string or key used many times: counted by its bytes at every use")
    func sharedLongStrings() {
        // One string of 1 MiB, used 100 times in an array: 100 MiB read from a file of about 1 MiB.
        var array = BinaryPlistBuilder()
        array.referenceSize = 2
        array.offsetSize = 4
        let text = array.add(BinaryPlistBuilder.marker(0x5, count: 1 << 20) + Array(repeating: 0x61, count: 1 << 20))
        let top = array.add(BinaryPlistBuilder.marker(0xA, count: 100) + array.references(Array(repeating: text, count: 100)))
        expectBinaryError(array.build(top: top), "MiB of strings and data")
        // The same string as the key of 100 members (each hashed whole into the dictionary: minutes for larger ones).
        var dictionary = BinaryPlistBuilder()
        dictionary.referenceSize = 2
        dictionary.offsetSize = 4
        let key = dictionary.add(BinaryPlistBuilder.marker(0x5, count: 1 << 20) + Array(repeating: 0x62, count: 1 << 20))
        let value = dictionary.add([0x09])
        let members = dictionary.add(
            BinaryPlistBuilder.marker(0xD, count: 100)
                + dictionary.references(Array(repeating: key, count: 100) + Array(repeating: value, count: 100)))
        expectBinaryError(dictionary.build(top: members), "MiB of strings and data")
    }

    @Test("invalid strings and keys")
    func badStrings() {
        var loneSurrogate = BinaryPlistBuilder()
        loneSurrogate.add([0x61, 0xD8, 0x00])
        expectBinaryError(loneSurrogate.build(), "unpaired UTF-16 surrogate", at: 9)
        var lowFirst = BinaryPlistBuilder()
        lowFirst.add([0x62, 0xDC, 0x00, 0x00, 0x41])
        expectBinaryError(lowFirst.build(), "unpaired UTF-16 surrogate", at: 9)
        var nonASCII = BinaryPlistBuilder()
        nonASCII.add([0x52, 0x41, 0xC3])
        expectBinaryError(nonASCII.build(), "ASCII string", at: 10)
        var integerKey = BinaryPlistBuilder()
        integerKey.add([0xD1, 0x01, 0x01])
        integerKey.add([0x10, 0x05])
        expectBinaryError(integerKey.build(), "key must be a string", at: 9)
    }

    @Test(
        "markers that are not property-list values",
        arguments: [
            ([0x00] as [UInt8], "null"), ([0x0F], "unknown object marker"), ([0x80, 0x01], "UID"),
            ([0x15, 0x00], "1, 2, 4, 8 or 16 bytes"), ([0x21, 0x00, 0x00], "4 or 8 bytes"),
            ([0x34], "unknown date marker"),
            ([0x70], "unknown object marker"), ([0xE0], "unknown object marker"),
            ([0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0], "64 signed bits"),
            ([0x33, 0x7F, 0xF0, 0, 0, 0, 0, 0, 0], "finite"),
        ])
    func badMarkers(bytes: [UInt8], fragment: String) {
        var builder = BinaryPlistBuilder()
        builder.add(bytes)
        expectBinaryError(builder.build(), fragment, at: 8)
    }

    @Test(
        "random corruptions of real files never crash",
        arguments: ["telegram.binary.plist", "telegram.plist", "olvid.plist"])
    func mutations(name: String) throws {
        let original = try Fixtures.bytes(name)
        var generator = SeededRandom(seed: 0x5EED)
        for _ in 0..<1500 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: position)
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: position)
                }
            }
            // Either outcome is fine; what matters is that it returns.
            _ = try? PropertyListValue(parsing: bytes)
            _ = try? ShareTarget(infoPlist: PropertyListValue(parsing: bytes))
        }
    }

    @Test("random bytes after a bplist00 header never crash")
    func randomBinary() {
        var generator = SeededRandom(seed: 42)
        for _ in 0..<3000 {
            let length = Int.random(in: 0..<120, using: &generator)
            let bytes = Array("bplist00".utf8) + (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? PropertyListValue(parsing: bytes)
        }
    }

    @Test("hostile predicates: deep nesting, long rules, random text")
    func hostilePredicates() {
        let deep = String(repeating: "(", count: 5000) + "a == 1" + String(repeating: ")", count: 5000)
        #expect(throws: PredicateSyntaxError.self) { _ = try ActivationPredicate(parsing: deep) }
        let negations = String(repeating: "NOT ", count: 5000) + "a == 1"
        #expect(throws: PredicateSyntaxError.self) { _ = try ActivationPredicate(parsing: negations) }
        let long = (0..<2000).map { "a == \($0)" }.joined(separator: " OR ")
        #expect(throws: Never.self) { _ = try ActivationPredicate(parsing: long) }
        var generator = SeededRandom(seed: 7)
        let pieces = [
            "SUBQUERY", "(", ")", ",", "$x", "$y", ".", "@count", "==", "ANY", "ALL", "NONE", "\"a\"", "'b",
            "1", "-2", "UTI-CONFORMS-TO", "UTI-EQUALS", "AND", "OR", "NOT", "!", "&&", "||", "extensionItems", " ",
            "\n",
            "99999999999999999999", "@", "$", "=", "<", ">", "\\", "é",
        ]
        for _ in 0..<3000 {
            let rule = (0..<Int.random(in: 0..<25, using: &generator))
                .map { _ in pieces.randomElement(using: &generator) ?? "" }.joined(separator: " ")
            if let predicate = try? ActivationPredicate(parsing: rule) {
                _ = predicate.decision(for: Fixtures.request([["public.url=https://a.example"]]))
            }
        }
    }
}

/// An extension item's `userInfo` built in code meets no parser's limit on nesting, and the predicate evaluator
/// recursed into it: 600 levels overflowed a 512 KiB stack (a GCD worker thread's on iOS). Deeper than a property
/// list may be (128 levels) is refused before any evaluation, on a stack of that size.
@Suite struct DeepUserInfoTests {
    static func nested(_ levels: Int) -> PropertyListValue {
        var value = PropertyListValue.string("x")
        for level in 0..<levels { value = level.isMultiple(of: 2) ? .array([value]) : .dictionary(["k": value]) }
        return value
    }

    static func request(_ levels: Int) -> ShareRequest {
        ShareRequest(items: [
            ExtensionItem(attachments: [Attachment(typeIdentifiers: ["public.jpeg"])], userInfo: ["k": nested(levels)])
        ])
    }

    @Test func aUserInfoDeeperThanAPropertyListIsRefusedWithoutRecursion() throws {
        let rule = try ActivationPredicate(parsing: "SUBQUERY(extensionItems, $item, $item.k == $item.k).@count == 1")
        let target = ShareTarget(activationRule: .predicate(rule), intentsSupported: ["INSendMessageIntent"])
        // The item's userInfo is a level of its own: 127 levels under it is the deepest a plist may be.
        let decisions = SmallStack.run(bytes: 512 << 10) {
            (target.evaluate(Self.request(127)), target.evaluate(Self.request(2_000)))
        }
        #expect(decisions.0.activated, "\(decisions.0)")
        #expect(!decisions.1.activated && decisions.1.reason?.contains("nested deeper than 128 levels") == true, "\(decisions.1)")
        let flow = ShareFlow(target: target)
        let refused = #expect(throws: InputError.self) {
            try flow.run(
                Self.request(129), choice: .none, action: .preview, account: "a",
                context: RankingContext(at: Timestamp(seconds: 1_796_000_000)), in: InMemoryDonationStore())
        }
        #expect(refused?.field == "userInfo", "\(String(describing: refused))")
        // The predicate's own doors refuse it too.
        #expect(!SmallStack.run(bytes: 512 << 10) { rule.evaluate(Self.request(2_000).matchingDictionary) })
        #expect(SmallStack.run(bytes: 512 << 10) { rule.evaluate(Self.request(127).matchingDictionary) })
    }

    /// One array shared by itself 40 times over is 40 arrays to build and 2⁴⁰ values to walk: the check of the
    /// nesting stops at a million values, as the binary parser does, where it would have walked for days.
    @Test func aUserInfoThatSharesItselfIsRefusedByItsCount() throws {
        var shared = PropertyListValue.string("x")
        for _ in 0..<40 { shared = .array([shared, shared]) }
        let request = ShareRequest(items: [ExtensionItem(userInfo: ["k": shared])])
        #expect(request.nestingProblem?.contains("more than 1000000 values") == true)
        let target = ShareTarget(activationRule: .acceptingAnything, intentsSupported: ["INSendMessageIntent"])
        #expect(throws: InputError.self) {
            try ShareFlow(target: target).run(
                request, choice: .none, action: .preview, account: "a",
                context: RankingContext(at: Timestamp(seconds: 1_796_000_000)), in: InMemoryDonationStore())
        }
    }
}

/// Runs `body` on a thread of its own with a stack of `bytes`, and waits for its result.
enum SmallStack {
    private final class Box: @unchecked Sendable {
        var body: (() -> Void)?
    }

    static func run<T>(bytes: Int, _ body: @escaping () -> T) -> T {
        var result: T?
        let box = Box()
        box.body = { result = body() }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, bytes)
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { argument in
            Unmanaged<Box>.fromOpaque(argument!).takeUnretainedValue().body?()
            return nil
        }, Unmanaged.passUnretained(box).toOpaque())
        precondition(created == 0, "pthread_create: \(created)")
        pthread_join(thread, nil)
        pthread_attr_destroy(&attributes)
        return result!
    }
}
