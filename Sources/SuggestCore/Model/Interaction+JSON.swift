import CSystem

extension Interaction {
    /// The longest string the contract accepts, in UTF-8 bytes.
    public static let maximumStringBytes = 4096

    /// The most recipients one donation may name (docs/donation-format.md): as many as the largest groups of the
    /// common messengers hold (Signal's and WhatsApp's 1,024). A suggestion shows its conversation's people, so a
    /// donation naming 100,000 made `list --json --limit 3` 6.4 MB; a larger group is donated with its name and a
    /// part of its members.
    public static let maximumRecipients = 1024

    /// The most distinct content types one donation may carry: more than any message holds (WhatsApp sends at most
    /// 100 media items in one message, most of one type). Each is a row of its conversation's content sums with its
    /// own sorted lists, so a donation naming a million cost the store a million rows.
    public static let maximumContentTypes = 100

    /// Reads one donation from parsed JSON, validating it exactly as the contract says.
    ///
    /// Unknown members are ignored so that newer writers can add fields. `content` (the message text) is read
    /// past and dropped.
    /// - Parameter defaultAccount: the account for a donation that names none.
    /// - Throws: `InputError` naming the first offending field.
    public init(json: JSONValue, defaultAccount: String = Interaction.defaultAccount) throws(InputError) {
        let reader = FieldReader(path: "")
        guard case .object = json else {
            throw InputError(field: nil, message: "expected a JSON object, found \(json.kindName)")
        }
        let named = try reader.string(json, "account")
        let account = named ?? defaultAccount
        guard !account.isEmpty else { throw InputError(field: "account", message: "must not be empty") }
        // The caller's default is held to the rules of the field: a store must never hold an account that its
        // export would write and its import refuse.
        if named == nil { try FieldReader.check(account, field: "account") }
        let identifier = try reader.string(json, "identifier")
        if identifier == "" { throw InputError(field: "identifier", message: "must not be empty when present") }
        let groupIdentifier = try reader.string(json, "groupIdentifier")
        guard let dateValue = json["date"], dateValue != .null else {
            throw InputError(field: "date", message: "is required (RFC 3339 with a zone, or Unix seconds)")
        }
        let date = try Interaction.parseDate(dateValue, field: "date")
        let direction: InteractionDirection
        if let text = try reader.string(json, "direction") {
            guard let known = InteractionDirection(rawValue: text) else {
                throw InputError(
                    field: "direction",
                    message: "unknown direction \"\(text.prefix(40))\"; use outgoing, incoming or unspecified")
            }
            direction = known
        } else {
            direction = .unspecified
        }
        guard let intentValue = json["intent"], intentValue != .null else {
            throw InputError(field: "intent", message: "is required (an object with conversationIdentifier)")
        }
        let intent = try SendMessageIntent(json: intentValue, path: "intent")
        try Interaction.checkLimits(of: intent)
        let engaged = try reader.bool(json, "engagedSuggestion") ?? false
        self.init(
            account: account, identifier: identifier, groupIdentifier: groupIdentifier, date: date,
            direction: direction, intent: intent, isEngagedSuggestion: engaged)
    }

    /// Refuses an intent that names more people or content types than a new donation may. Checked on the donation,
    /// not in `SendMessageIntent(json:path:)`: the store reads the intents it kept through that, and one kept before
    /// the limits must still read.
    static func checkLimits(of intent: SendMessageIntent) throws(InputError) {
        guard intent.recipients.count <= Interaction.maximumRecipients else {
            throw InputError(
                field: "intent.recipients",
                message: "names \(intent.recipients.count) people, more than the \(Interaction.maximumRecipients) a "
                    + "donation may name; give a large group's speakableGroupName and a part of its members")
        }
        guard intent.contentTypes.count <= Interaction.maximumContentTypes else {
            throw InputError(
                field: "intent.contentTypes",
                message: "names \(intent.contentTypes.count) distinct content types, more than the "
                    + "\(Interaction.maximumContentTypes) a donation may carry")
        }
    }

    /// Refuses a name that a donation could not carry as its conversation or donation identifier (empty, over
    /// 4096 bytes, or with a NUL): for the calls that name a conversation without a donation (a block, "suggest
    /// less", a deletion), so that a store never keeps a name its export could not write or its import read.
    public static func checkName(_ name: String, field: String) throws(InputError) {
        guard !name.isEmpty else { throw InputError(field: field, message: "must not be empty") }
        try FieldReader.check(name, field: field)
    }

    /// Reads one donation from the bytes of a JSON text (one line of JSON Lines): parsing and validation in one,
    /// with a JSON syntax error reported as invalid input like any other. `import`, `donate --json` and `eval`
    /// all read donations through it.
    /// - Throws: `InputError`; the caller adds the line number.
    /// - Parameter intents: intents decoded before, by their JSON's bytes (for a reader of many lines): one of the
    ///   same bytes is taken from there rather than decoded again, and new ones are added.
    public init(
        jsonBytes bytes: UnsafeBufferPointer<UInt8>, defaultAccount: String = Interaction.defaultAccount,
        intents: (any IntentMemo)? = nil
    ) throws(InputError) {
        // Not read at all past a bound (the tree path takes about 30 bytes an element: a 60 MB line took 890 MB
        // only to say what was wrong with it).
        guard bytes.count <= Interaction.maximumReadBytes else {
            throw InputError(
                field: nil,
                message: "is \(bytes.count) bytes of JSON, more than a donation may take "
                    + "(\(ByteCount(Interaction.maximumDonationBytes)) as export writes it): a name or identifier "
                    + "takes at most \(Interaction.maximumStringBytes) bytes; for a large group, give its "
                    + "speakableGroupName and a part of its members")
        }
        // Almost every line is well formed: read it straight from its bytes. Anything else takes the tree path,
        // which says exactly what is wrong (and reads the odd valid line the fast path leaves to it).
        let interaction: Interaction
        switch InteractionDecoder.read(bytes, defaultAccount: defaultAccount, intents: intents) {
        case .read(let read):
            interaction = read
        case .refused(let refusal):
            intents?.fastPathGaveUp()
            throw refusal
        case .gaveUp:
            intents?.fastPathGaveUp()
            interaction = try Interaction(json: try JSONValue.input(bytes, field: nil), defaultAccount: defaultAccount)
        }
        if bytes.count > Interaction.writtenSizeCheckedAbove { try interaction.checkWrittenSize() }
        self = interaction
    }

    /// The most bytes of JSON one donation may take, as `export` writes it (`jsonLine`): far more than any
    /// message's conversation needs (1,024 recipients with every field of a person filled take about 300 KB), and
    /// a bound on what a store keeps and a listing returns for one conversation. Without it, 1,024 recipients with
    /// five 4 KiB fields each made one donation 21 MB, and `list --json --limit 20` over twenty of them 422 MB (1.3
    /// GB of memory); a server answering `limit=1000` over such a tenant's conversations would have built 21 GB.
    /// Measured as written, not as read, so that every line `export` writes is one `import` reads back.
    public static let maximumDonationBytes = 1 << 20

    /// The longest text read as a donation at all. Longer than any donation within the limit is written, except
    /// one spelled with many more escapes or unknown members than it needs.
    static let maximumReadBytes = 4 << 20

    /// The length of input below which a donation's written form cannot pass the limit, so that it is not
    /// written to be measured: writing at most triples a text (`\b` becomes `\u0008`), and adds the account, the
    /// direction and the handles' types, a few KB at most.
    public static let writtenSizeCheckedAbove = 320 << 10

    /// What a store's identifier adds to a donation given without one, as written: `"identifier":"`, a UUID's 36
    /// characters, `",`.
    static let generatedIdentifierBytes = 52

    /// Refuses a donation whose written form (`jsonLine`) is longer than `maximumDonationBytes`, counting the
    /// identifier a store gives a donation without one (`"identifier":"` and 36 characters: a donation accepted
    /// at the limit without one was exported 52 bytes over it, and its export refused by `import`).
    public func checkWrittenSize() throws(InputError) {
        var writer = JSONWriter()
        write(to: &writer)
        let length = writer.bytes.count + (identifier == nil ? Interaction.generatedIdentifierBytes : 0)
        guard length <= Interaction.maximumDonationBytes else {
            throw InputError(
                field: nil,
                message: "is \(length) bytes of JSON as export writes it, more than the "
                    + "\(ByteCount(Interaction.maximumDonationBytes)) a donation may take; give a large group's "
                    + "speakableGroupName and a part of its members")
        }
    }

    /// Parses a contract date: an RFC 3339 string with a zone, or a finite number of Unix seconds.
    public static func parseDate(_ value: JSONValue, field: String) throws(InputError) -> Timestamp {
        let date: Timestamp
        switch value {
        case .number(let seconds):
            date = Timestamp(seconds: seconds)
        case .string(let text):
            // Checked as every string is: a date's fraction may otherwise run on for megabytes.
            try FieldReader.check(text, field: field)
            guard let parsed = Timestamp(rfc3339: text) else {
                throw InputError(
                    field: field,
                    message: "\"\(text.prefix(60))\" is not a date; use RFC 3339 with a zone "
                        + "(2026-11-29T18:03:00Z) or Unix seconds")
            }
            date = parsed
        default:
            throw InputError(field: field, message: "expected a date string or Unix seconds, found \(value.kindName)")
        }
        guard Timestamp.acceptedRange.contains(date) else {
            let given: String
            var number: Double?
            switch value {
            case .string(let text): given = "\"\(text.prefix(60))\""
            case .number(let seconds):
                given = JSONWriter.format(seconds)
                number = seconds
            default: given = "the date"
            }
            throw InputError(field: field, message: Timestamp.outOfRangeMessage(given, seconds: number))
        }
        return date
    }

    /// The donation as one line of JSON, the form `export` writes and `import` reads.
    public var jsonLine: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }

    /// This donation held to the rules its JSON would be (`init(json:defaultAccount:)`): one set of rules for every
    /// way in: a donation built in code with an empty conversation identifier, stored as given, would make every
    /// later read of its account fail ("a stored snapshot ... is damaged").
    /// - Returns: the donation as its JSON reads back: its date at the precision `export` writes (microseconds), an
    ///   empty `groupIdentifier` or `serviceName` none.
    /// - Throws: `InputError` naming the first field that breaks a rule.
    public func validated() throws(InputError) -> Interaction {
        guard date.seconds.isFinite else { throw InputError(field: "date", message: "is not a finite moment") }
        // Before the JSON: a date out of range is written as text that its reading then calls "not a date".
        guard Timestamp.acceptedRange.contains(date) else {
            throw InputError(field: "date", message: "\(date.seconds) seconds is outside the years 0001 to 9999")
        }
        var writer = JSONWriter()
        write(to: &writer)
        return try writer.bytes.withUnsafeBufferPointer { bytes throws(InputError) in
            try Interaction(jsonBytes: bytes, defaultAccount: account)
        }
    }

    /// Writes the donation as a JSON object with members in a fixed order.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("account")
        writer.string(account)
        if let identifier {
            writer.key("identifier")
            writer.string(identifier)
        }
        if let groupIdentifier {
            writer.key("groupIdentifier")
            writer.string(groupIdentifier)
        }
        writer.key("date")
        writer.string(rfc3339: date)
        writer.key("direction")
        writer.string(direction.rawValue)
        if isEngagedSuggestion {
            writer.key("engagedSuggestion")
            writer.bool(true)
        }
        writer.key("intent")
        intent.write(to: &writer)
        writer.endObject()
    }
}

extension SendMessageIntent {
    /// Reads an intent from the bytes of a JSON object, as `Interaction(jsonBytes:)` reads a donation: straight from
    /// the bytes when they are well formed, else through the tree, whose errors are the contract's. The store reads
    /// every suggestion's latest intent so, and every exported one.
    /// - Parameter path: where the object sits, for error messages (`intent`).
    public init(jsonBytes bytes: UnsafeBufferPointer<UInt8>, path: String) throws(InputError) {
        if let intent = InteractionDecoder.decodeIntent(bytes) {
            self = intent
            return
        }
        try self.init(json: try JSONValue.input(bytes, field: path), path: path)
    }

    /// Reads an intent from parsed JSON, validating it as the contract says: a non-empty `conversationIdentifier`,
    /// the people, the content types (repeats dropped) and every string's limits. `content` is checked, then
    /// dropped. The recipients are not counted here (`Interaction.maximumRecipients` applies to a new donation):
    /// the store reads back through this the intents it kept.
    /// - Parameter path: where the object sits, for error messages (`intent`).
    /// - Throws: `InputError` naming the first offending field by its full path.
    public init(json: JSONValue, path: String) throws(InputError) {
        guard case .object = json else {
            throw InputError(field: path, message: "expected an object, found \(json.kindName)")
        }
        let reader = FieldReader(path: path)
        guard let conversation = try reader.string(json, "conversationIdentifier"), !conversation.isEmpty else {
            throw InputError(field: path + ".conversationIdentifier", message: "is required and must not be empty")
        }
        var recipients: [Person] = []
        if let list = json["recipients"], list != .null {
            guard case .array(let elements) = list else {
                throw InputError(
                    field: path + ".recipients", message: "expected an array of people, found \(list.kindName)")
            }
            for (index, element) in elements.enumerated() {
                recipients.append(try Person(json: element, path: "\(path).recipients[\(index)]"))
            }
        }
        var contentTypes: [String] = []
        // Distinct by bytes, as every store keeps content kinds.
        var seenTypes: Set<ByteKey> = []
        if let list = json["contentTypes"], list != .null {
            guard case .array(let elements) = list else {
                throw InputError(
                    field: path + ".contentTypes", message: "expected an array of UTIs, found \(list.kindName)")
            }
            for (index, element) in elements.enumerated() {
                let field = "\(path).contentTypes[\(index)]"
                guard case .string(let uti) = element, !uti.isEmpty else {
                    throw InputError(field: field, message: "expected a non-empty UTI string")
                }
                try FieldReader.check(uti, field: field)
                if seenTypes.insert(ByteKey(uti)).inserted { contentTypes.append(uti) }
            }
        }
        // `content` is the message text: validated like any string, then dropped.
        _ = try reader.string(json, "content")
        let sender: Person?
        if let value = json["sender"], value != .null {
            sender = try Person(json: value, path: path + ".sender")
        } else {
            sender = nil
        }
        self.init(
            conversationIdentifier: conversation,
            speakableGroupName: try reader.string(json, "speakableGroupName"),
            serviceName: try reader.string(json, "serviceName"),
            sender: sender, recipients: recipients,
            image: try reader.string(json, "image"), contentTypes: contentTypes)
    }

    /// Writes the intent as a JSON object with members in a fixed order, leaving out what is absent or empty; the
    /// message text was never kept, so it is never written.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("conversationIdentifier")
        writer.string(conversationIdentifier)
        writer.optional("speakableGroupName", speakableGroupName)
        writer.optional("serviceName", serviceName)
        if let sender {
            writer.key("sender")
            sender.write(to: &writer)
        }
        if !recipients.isEmpty {
            writer.key("recipients")
            writer.beginArray()
            for person in recipients { person.write(to: &writer) }
            writer.endArray()
        }
        writer.optional("image", image)
        if !contentTypes.isEmpty {
            writer.key("contentTypes")
            writer.beginArray()
            for uti in contentTypes { writer.string(uti) }
            writer.endArray()
        }
        writer.endObject()
    }
}

extension Person {
    /// Reads a person from parsed JSON: every member optional, strings within the contract's limits, a handle's
    /// `type` one of `Handle.Kind` (`unknown` when absent).
    /// - Parameter path: where the object sits, for error messages (`intent.recipients[0]`).
    /// - Throws: `InputError` naming the first offending field by its full path.
    public init(json: JSONValue, path: String) throws(InputError) {
        guard case .object = json else {
            throw InputError(field: path, message: "expected a person object, found \(json.kindName)")
        }
        let reader = FieldReader(path: path)
        var handle: Handle?
        if let value = json["personHandle"], value != .null {
            guard case .object = value else {
                throw InputError(field: path + ".personHandle", message: "expected an object, found \(value.kindName)")
            }
            let handleReader = FieldReader(path: path + ".personHandle")
            let kind: Handle.Kind
            if let text = try handleReader.string(value, "type") {
                guard let known = Handle.Kind(rawValue: text) else {
                    throw InputError(
                        field: path + ".personHandle.type",
                        message: "unknown handle type \"\(text.prefix(40))\"; use emailAddress, phoneNumber or unknown")
                }
                kind = known
            } else {
                kind = .unknown
            }
            handle = Handle(value: try handleReader.string(value, "value"), type: kind)
        }
        self.init(
            customIdentifier: try reader.string(json, "customIdentifier"),
            displayName: try reader.string(json, "displayName"),
            personHandle: handle,
            contactIdentifier: try reader.string(json, "contactIdentifier"),
            image: try reader.string(json, "image"),
            isMe: try reader.bool(json, "isMe"))
    }

    /// Writes the person as a JSON object with members in a fixed order.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.optional("customIdentifier", customIdentifier)
        writer.optional("displayName", displayName)
        if let personHandle {
            writer.key("personHandle")
            writer.beginObject()
            writer.optional("value", personHandle.value)
            writer.key("type")
            writer.string(personHandle.type.rawValue)
            writer.endObject()
        }
        writer.optional("contactIdentifier", contactIdentifier)
        writer.optional("image", image)
        if let isMe {
            writer.key("isMe")
            writer.bool(isMe)
        }
        writer.endObject()
    }
}

extension JSONWriter {
    /// Writes `name: value` when the value is present, nothing otherwise.
    public mutating func optional(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }
}

/// Reads typed members of a JSON object and reports wrong types by their full path.
struct FieldReader {
    /// The JSON path of the object read (empty at the top level); a member's path is built only for an error,
    /// since building it for every member read cost a third of `Interaction(json:)`.
    let path: String

    func field(_ name: String) -> String { path.isEmpty ? name : path + "." + name }

    func string(_ object: JSONValue, _ name: String) throws(InputError) -> String? {
        guard let value = object[name] else { return nil }
        switch value {
        case .null: return nil
        case .string(let text):
            try FieldReader.check(text, field: field(name))
            return text
        default:
            throw InputError(field: field(name), message: "expected a string, found \(value.kindName)")
        }
    }

    func bool(_ object: JSONValue, _ name: String) throws(InputError) -> Bool? {
        guard let value = object[name] else { return nil }
        switch value {
        case .null: return nil
        case .bool(let flag): return flag
        default: throw InputError(field: field(name), message: "expected true or false, found \(value.kindName)")
        }
    }

    /// Refuses strings the store must not hold: over the size limit, or with a NUL character that C APIs
    /// would silently cut at.
    static func check(_ text: String, field: @autoclosure () -> String) throws(InputError) {
        var text = text
        let (count, hasNul) = text.withUTF8 { bytes in
            (bytes.count, bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false)
        }
        guard count <= Interaction.maximumStringBytes else {
            throw InputError(
                field: field(), message: "is \(count) bytes long; the limit is \(Interaction.maximumStringBytes)")
        }
        guard !hasNul else { throw InputError(field: field(), message: "contains a NUL character") }
    }
}

extension JSONValue {
    /// The tree of an input the direct decoders left to the tree path, with a syntax error worded as invalid input
    /// and naming the member it is in (`intent.conversationIdentifier: invalid JSON: invalid UTF-8 in a string`).
    fileprivate static func input(_ bytes: UnsafeBufferPointer<UInt8>, field: String?) throws(InputError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes: bytes)
        } catch {
            let named = [field, JSONParser.path(at: error.offset, in: bytes)].compactMap { $0 }.joined(separator: ".")
            throw InputError(field: named.isEmpty ? nil : named, message: "invalid JSON: \(error)")
        }
    }
}
