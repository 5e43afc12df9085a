import CSystem

/// Reads one donation straight from the bytes of its JSON text, member by member, without building a
/// `JSONValue` tree.
///
/// `import` and `eval` read millions of lines, and the tree (an array of members per object, a retained string per
/// key, then a search by name for every field) cost more than the validation itself. This decoder is the fast
/// path for well-formed lines only: at the first thing it does not like (a syntax error, a field of the wrong type, a
/// member name with an escape) it gives up, and `Interaction(jsonBytes:)` reads the line again through the tree,
/// whose result and error messages are the contract's. So it must never accept what the tree path refuses, and
/// must read what both accept into the same value: every check below is the tree path's own (`FieldReader.check`,
/// `Interaction.parseDate`, the same required fields), unknown members are validated as JSON and skipped, and a
/// repeated member overwrites the earlier one, as `JSONValue`'s subscript takes the last.
struct InteractionDecoder {
    /// Why the fast path gave up; the tree path finds and words the actual problem, unless the fast path knows it
    /// (`refusal`: a donation over its limits, found once every member has been read, which is what the tree path
    /// would say of it too).
    struct GiveUp: Error {
        var refusal: InputError? = nil
    }

    /// What the fast path made of a line.
    enum Outcome {
        case read(Interaction)
        /// A line of valid JSON and valid members, refused as the tree path would refuse it.
        case refused(InputError)
        /// Anything else: the tree path says what.
        case gaveUp
    }

    private var parser: JSONParser
    /// Intents decoded before, by the bytes of their JSON object: an intent of the same bytes is not decoded again.
    private var intents: (any IntentMemo)?

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { parser = JSONParser(bytes) }

    /// The donation in `bytes`, or `nil` if anything about it needs the tree path.
    /// - Parameter intents: intents decoded before, consulted and added to.
    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, defaultAccount: String, intents: (any IntentMemo)? = nil
    ) -> Interaction? {
        guard case .read(let interaction) = read(bytes, defaultAccount: defaultAccount, intents: intents) else {
            return nil
        }
        return interaction
    }

    /// The donation in `bytes`, or the tree path's refusal of it when the fast path knows it, or `.gaveUp`.
    static func read(
        _ bytes: UnsafeBufferPointer<UInt8>, defaultAccount: String, intents: (any IntentMemo)? = nil
    ) -> Outcome {
        var decoder = InteractionDecoder(bytes)
        decoder.intents = intents
        decoder.parser.skipWhitespace()
        let outcome: Outcome
        do throws(GiveUp) {
            outcome = .read(try decoder.interaction(defaultAccount: defaultAccount))
        } catch {
            guard let refusal = error.refusal else { return .gaveUp }
            outcome = .refused(refusal)
        }
        // Text after the object is a syntax error, which the tree path reports first.
        decoder.parser.skipWhitespace()
        return decoder.parser.index == bytes.count ? outcome : .gaveUp
    }

    /// The intent in `bytes`, a JSON object like a donation's `intent` member (the store keeps each conversation's
    /// latest intent so), or `nil` if anything about it needs the tree path.
    static func decodeIntent(_ bytes: UnsafeBufferPointer<UInt8>) -> SendMessageIntent? {
        whole(bytes) { (decoder: inout InteractionDecoder) throws(GiveUp) in try decoder.intent() }
    }

    /// What `read` makes of `bytes`, provided nothing but white space follows it.
    private static func whole<T>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ read: (inout InteractionDecoder) throws(GiveUp) -> T
    ) -> T? {
        var decoder = InteractionDecoder(bytes)
        decoder.parser.skipWhitespace()
        do throws(GiveUp) {
            let value = try read(&decoder)
            decoder.parser.skipWhitespace()
            return decoder.parser.index == bytes.count ? value : nil
        } catch {
            return nil
        }
    }

    // MARK: The objects of a donation

    private mutating func interaction(defaultAccount: String) throws(GiveUp) -> Interaction {
        var account: String?
        var identifier: String?
        var groupIdentifier: String?
        var date: Timestamp?
        var direction = InteractionDirection.unspecified
        var intent: SendMessageIntent?
        var engaged = false
        try object { (decoder: inout InteractionDecoder, key: Key) throws(GiveUp) in
            switch key {
            case "account": account = try decoder.string()
            case "identifier": identifier = try decoder.string()
            case "groupIdentifier": groupIdentifier = try decoder.string()
            case "date": date = try decoder.date()
            case "direction":
                if let text = try decoder.string() {
                    guard let known = InteractionDirection(rawValue: text) else { throw GiveUp() }
                    direction = known
                } else {
                    direction = .unspecified
                }
            case "intent":
                if let memo = decoder.intents, let end = decoder.parser.endOfObject() {
                    intent = try decoder.intent(endingAt: end, memo: memo)
                } else {
                    intent = try decoder.nullable { (decoder: inout InteractionDecoder) throws(GiveUp) in
                        try decoder.intent()
                    }
                }
            case "engagedSuggestion": engaged = try decoder.bool() ?? false
            default: try decoder.skipValue()
            }
        }
        let resolvedAccount = account ?? defaultAccount
        // A default over the limit, or with a NUL, is refused by the tree path, which names the field.
        guard !resolvedAccount.isEmpty,
            account != nil
                || (resolvedAccount.utf8.count <= Interaction.maximumStringBytes && !resolvedAccount.utf8.contains(0)),
            identifier != "", let date, let intent
        else { throw GiveUp() }
        // The tree path's limits on a donation (not on an intent read alone: the store's kept intents).
        do throws(InputError) {
            try Interaction.checkLimits(of: intent)
        } catch {
            throw GiveUp(refusal: error)
        }
        return Interaction(
            account: resolvedAccount, identifier: identifier, groupIdentifier: groupIdentifier, date: date,
            direction: direction, intent: intent, isEngagedSuggestion: engaged)
    }

    /// The intent object at the cursor, which ends at `end`: the one `memo` remembers for exactly these bytes (the
    /// same bytes decode to the same intent), or decoded and remembered.
    private mutating func intent(endingAt end: Int, memo: any IntentMemo) throws(GiveUp) -> SendMessageIntent {
        let start = parser.index
        if let known = memo.intent(forJSON: UnsafeBufferPointer(rebasing: parser.bytes[start..<end])) {
            parser.index = end
            return known
        }
        let read = try intent()
        memo.remember(read, forJSON: UnsafeBufferPointer(rebasing: parser.bytes[start..<parser.index]))
        return read
    }

    private mutating func intent() throws(GiveUp) -> SendMessageIntent {
        var conversation: String?
        var groupName: String?
        var service: String?
        var sender: Person?
        var recipients: [Person] = []
        var image: String?
        var contentTypes: [String] = []
        // Distinct by bytes, as every store keeps content kinds.
        var seenTypes: Set<ByteKey> = []
        try object { (decoder: inout InteractionDecoder, key: Key) throws(GiveUp) in
            switch key {
            case "conversationIdentifier": conversation = try decoder.string()
            case "speakableGroupName": groupName = try decoder.string()
            case "serviceName": service = try decoder.string()
            case "sender":
                sender = try decoder.nullable { (decoder: inout InteractionDecoder) throws(GiveUp) in
                    try decoder.person()
                }
            case "recipients":
                recipients = []
                try decoder.array { (decoder: inout InteractionDecoder) throws(GiveUp) in
                    recipients.append(try decoder.person())
                }
            case "image": image = try decoder.string()
            case "contentTypes":
                contentTypes = []
                seenTypes = []
                try decoder.array { (decoder: inout InteractionDecoder) throws(GiveUp) in
                    guard let uti = try decoder.string(), !uti.isEmpty else { throw GiveUp() }
                    if seenTypes.insert(ByteKey(uti)).inserted { contentTypes.append(uti) }
                }
            case "content": _ = try decoder.string()
            default: try decoder.skipValue()
            }
        }
        guard let conversation, !conversation.isEmpty else { throw GiveUp() }
        return SendMessageIntent(
            conversationIdentifier: conversation, speakableGroupName: groupName, serviceName: service, sender: sender,
            recipients: recipients, image: image, contentTypes: contentTypes)
    }

    private mutating func person() throws(GiveUp) -> Person {
        var person = Person()
        try object { (decoder: inout InteractionDecoder, key: Key) throws(GiveUp) in
            switch key {
            case "customIdentifier": person.customIdentifier = try decoder.string()
            case "displayName": person.displayName = try decoder.string()
            case "personHandle":
                person.personHandle = try decoder.nullable { (decoder: inout InteractionDecoder) throws(GiveUp) in
                    try decoder.handle()
                }
            case "contactIdentifier": person.contactIdentifier = try decoder.string()
            case "image": person.image = try decoder.string()
            case "isMe": person.isMe = try decoder.bool()
            default: try decoder.skipValue()
            }
        }
        return person
    }

    private mutating func handle() throws(GiveUp) -> Person.Handle {
        var value: String?
        var kind = Person.Handle.Kind.unknown
        try object { (decoder: inout InteractionDecoder, key: Key) throws(GiveUp) in
            switch key {
            case "value": value = try decoder.string()
            case "type":
                if let text = try decoder.string() {
                    guard let known = Person.Handle.Kind(rawValue: text) else { throw GiveUp() }
                    kind = known
                } else {
                    kind = .unknown
                }
            default: try decoder.skipValue()
            }
        }
        return Person.Handle(value: value, type: kind)
    }

    // MARK: Values

    /// A string member, `nil` for `null`, checked as `FieldReader.string` checks it.
    private mutating func string() throws(GiveUp) -> String? {
        switch parser.current {
        case UInt8(ascii: "\""):
            if let raw = try rawString() {
                // Without escapes there is no NUL (control characters are refused), so the size is the only check.
                guard raw.count <= Interaction.maximumStringBytes else { throw GiveUp() }
                return String(decoding: raw, as: UTF8.self)
            }
            guard let text = try? parser.parseString() else { throw GiveUp() }
            guard (try? FieldReader.check(text, field: "")) != nil else { throw GiveUp() }
            return text
        case UInt8(ascii: "n"):
            try literal("null")
            return nil
        default: throw GiveUp()
        }
    }

    /// The bytes between the quotes of a string without escapes, with the cursor moved past it; `nil`, with the
    /// cursor left alone, for a string with escapes.
    private mutating func rawString() throws(GiveUp) -> UnsafeBufferPointer<UInt8>? {
        do { return try parser.parseUnescapedString() } catch { throw GiveUp() }
    }

    private mutating func bool() throws(GiveUp) -> Bool? {
        switch parser.current {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        case UInt8(ascii: "n"):
            try literal("null")
            return nil
        default: throw GiveUp()
        }
    }

    private mutating func date() throws(GiveUp) -> Timestamp? {
        let date: Timestamp
        switch parser.current ?? 0 {
        case UInt8(ascii: "\""):
            if let raw = try rawString() {
                guard raw.count <= Interaction.maximumStringBytes, let parsed = Timestamp(rfc3339UTF8: raw) else {
                    throw GiveUp()
                }
                date = parsed
            } else {
                guard let text = try? parser.parseString(), text.utf8.count <= Interaction.maximumStringBytes,
                    let parsed = Timestamp(rfc3339: text)
                else {
                    throw GiveUp()
                }
                date = parsed
            }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let number = try? parser.parseNumber() else { throw GiveUp() }
            date = Timestamp(seconds: number)
        case UInt8(ascii: "n"):
            try literal("null")
            return nil
        default: throw GiveUp()
        }
        guard Timestamp.acceptedRange.contains(date) else { throw GiveUp() }
        return date
    }

    /// `null`, or whatever `read` makes of the value.
    private mutating func nullable<T>(_ read: (inout InteractionDecoder) throws(GiveUp) -> T) throws(GiveUp) -> T? {
        if parser.current == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        return try read(&self)
    }

    private mutating func literal(_ text: StaticString) throws(GiveUp) {
        guard (try? parser.parseLiteral(text)) != nil else { throw GiveUp() }
    }

    /// Any JSON value, validated as the tree parser would, and not kept.
    private mutating func skipValue() throws(GiveUp) {
        guard (try? parser.skipValue()) != nil else { throw GiveUp() }
    }

    // MARK: Structure

    /// A member name without escapes, as the bytes between its quotes.
    struct Key: Equatable, ExpressibleByStringLiteral {
        var bytes: UnsafeBufferPointer<UInt8>

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        init(stringLiteral literal: StaticString) {
            bytes = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.bytes.count == rhs.bytes.count else { return false }
            guard let left = lhs.bytes.baseAddress, let right = rhs.bytes.baseAddress else { return true }
            return memcmp(left, right, lhs.bytes.count) == 0
        }
    }

    /// Reads an object, calling `member` with the cursor on each member's value. `member` must consume it.
    private mutating func object(_ member: (inout InteractionDecoder, Key) throws(GiveUp) -> Void) throws(GiveUp) {
        try delimited(open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) {
            (decoder: inout InteractionDecoder) throws(GiveUp) in
            let key = try decoder.key()
            decoder.parser.skipWhitespace()
            guard decoder.parser.current == UInt8(ascii: ":") else { throw GiveUp() }
            decoder.parser.index += 1
            decoder.parser.skipWhitespace()
            try member(&decoder, key)
        }
    }

    /// Reads an array (or `null`, read as empty), calling `element` with the cursor on each element.
    private mutating func array(_ element: (inout InteractionDecoder) throws(GiveUp) -> Void) throws(GiveUp) {
        if parser.current == UInt8(ascii: "n") {
            try literal("null")
            return
        }
        try delimited(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), element)
    }

    /// The frame of an object or an array: `open`, items separated by commas, `close`, one level of nesting deeper
    /// (bounded as the tree parser bounds it). `item` is called with the cursor on each item and must consume it.
    private mutating func delimited(
        open: UInt8, close: UInt8, _ item: (inout InteractionDecoder) throws(GiveUp) -> Void
    ) throws(GiveUp) {
        guard parser.current == open, (try? parser.enter()) != nil else { throw GiveUp() }
        parser.index += 1
        parser.skipWhitespace()
        if parser.current == close {
            parser.index += 1
            parser.depth -= 1
            return
        }
        while true {
            parser.skipWhitespace()
            try item(&self)
            parser.skipWhitespace()
            switch parser.current {
            case UInt8(ascii: ","): parser.index += 1
            case close:
                parser.index += 1
                parser.depth -= 1
                return
            default: throw GiveUp()
            }
        }
    }

    /// A member name; a name with escapes goes to the tree path, which compares names as decoded strings.
    private mutating func key() throws(GiveUp) -> Key {
        guard parser.current == UInt8(ascii: "\""), let name = try rawString() else { throw GiveUp() }
        return Key(bytes: name)
    }
}

/// Intents decoded before, by the exact bytes of their JSON object, for a decoder of many donations
/// (`Interaction(jsonBytes:defaultAccount:intents:)`): most donations repeat an intent their conversation has had,
/// byte for byte, and matching its bytes costs a fraction of decoding it (its strings allocated, its people built).
public protocol IntentMemo: AnyObject {
    /// The intent decoded before from exactly these bytes, if one is remembered.
    func intent(forJSON bytes: UnsafeBufferPointer<UInt8>) -> SendMessageIntent?
    /// Remembers the intent these bytes decoded to.
    func remember(_ intent: SendMessageIntent, forJSON bytes: UnsafeBufferPointer<UInt8>)
    /// The line whose intents were just matched or remembered is being read again by the tree path (the fast path
    /// gave up on something after them): the intent it ends with may be another one (a later `intent` member that
    /// only the tree path reads), so nothing matched for this line may be taken as its intent's memo.
    func fastPathGaveUp()
}

extension JSONParser {
    /// The index just past the object that starts at the cursor, found by its brackets and strings alone (not
    /// validated), or `nil` when the cursor is not on `{` or the object does not end.
    func endOfObject() -> Int? {
        guard current == UInt8(ascii: "{") else { return nil }
        var depth = 0
        var position = index
        var inString = false
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if inString {
                if byte == UInt8(ascii: "\\") {
                    position += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return position }
            default: break
            }
        }
        return nil
    }
}
