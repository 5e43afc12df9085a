import SuggestCore

/// Turns public message histories into donation JSON Lines, so that replay evaluation can run on real behaviour.
///
/// A message from S to the recipients R at time t becomes:
/// - one outgoing donation in account `u<S>` to the conversation R, and
/// - for each r in R, one incoming donation in account `u<r>` to the conversation as r sees it: the other members,
///   S included.
///
/// A conversation with one other member is `u<id>`; with several it is `g<ids>`, the members' numeric ids sorted
/// and joined by `-` (`g3-17-42`), with a `speakableGroupName` made of their names. Each donation's `recipients`
/// are the conversation's other members, so that a suggestion built from either direction shows the same people;
/// `sender` is who wrote. Identifiers are `<source>-<message>-u<account>`: unique per account even where the
/// source repeats a message. No message text or subject is kept.
///
/// What it writes, `import` takes: a message to more people than a donation may name
/// (`Interaction.maximumRecipients`) is a broadcast, skipped and counted, not a conversation to suggest (and its
/// members' sides, each listing all the others, grow with the square of its size); a group whose joined ids would
/// pass the longest identifier (`Interaction.maximumStringBytes`) is named by a hash of them instead, `gh<hex>`.
public enum HistoryConverter {
    /// What a conversion read and wrote.
    public struct Summary: Sendable, Equatable {
        /// Messages read.
        public var messages = 0
        /// Donations written: one outgoing per message and one incoming per recipient.
        public var donations = 0
        /// Messages that gave no donation: no recipient other than the sender.
        public var skipped = 0
        /// Messages that gave no donation: more recipients than a donation may name.
        public var broadcasts = 0

        /// A summary of these counts.
        public init(messages: Int = 0, donations: Int = 0, skipped: Int = 0, broadcasts: Int = 0) {
            self.messages = messages
            self.donations = donations
            self.skipped = skipped
            self.broadcasts = broadcasts
        }
    }

    /// Emits the donations of one message.
    /// - Parameters:
    ///   - source: the prefix of the identifiers (`collegemsg`, `enron`).
    ///   - number: the message's number in the source (line or message id).
    ///   - recipients: the recipients' ids; repeats and the sender are dropped.
    ///   - names: display names by id, where known.
    /// - Complexity: O(r² ) for r recipients: each recipient's side lists the others.
    static func emitMessage(
        source: String, number: Int, sender: Int, recipients: [Int], date: Timestamp, names: [Int: String],
        summary: inout Summary, emit: (Interaction) throws -> Void
    ) rethrows {
        summary.messages += 1
        let members = Array(Set(recipients).subtracting([sender])).sorted()
        guard !members.isEmpty else {
            summary.skipped += 1
            return
        }
        guard members.count <= Interaction.maximumRecipients else {
            summary.broadcasts += 1
            return
        }
        let me = Person(customIdentifier: "u\(sender)", displayName: names[sender], isMe: true)
        try emit(
            Interaction(
                account: "u\(sender)", identifier: "\(source)-\(number)-u\(sender)", date: date, direction: .outgoing,
                intent: intent(members: members, sender: me, names: names)))
        summary.donations += 1
        let writer = Person(customIdentifier: "u\(sender)", displayName: names[sender])
        for recipient in members {
            var others = members.filter { $0 != recipient }
            others.append(sender)
            others.sort()
            try emit(
                Interaction(
                    account: "u\(recipient)", identifier: "\(source)-\(number)-u\(recipient)", date: date,
                    direction: .incoming, intent: intent(members: others, sender: writer, names: names)))
            summary.donations += 1
        }
    }

    /// The intent of a conversation with `members` (sorted ids, the account's own excluded).
    static func intent(members: [Int], sender: Person, names: [Int: String]) -> SendMessageIntent {
        let people = members.map { Person(customIdentifier: "u\($0)", displayName: names[$0]) }
        guard members.count > 1 else {
            return SendMessageIntent(
                conversationIdentifier: "u\(members[0])", sender: sender, recipients: people)
        }
        var identifier = "g" + members.map(String.init).joined(separator: "-")
        if identifier.utf8.count > Interaction.maximumStringBytes {
            let key = UInt64(bitPattern: StableHash.key(identifier))
            identifier = "gh" + String(repeating: "0", count: 16 - String(key, radix: 16).count) + String(key, radix: 16)
        }
        return SendMessageIntent(
            conversationIdentifier: identifier,
            speakableGroupName: groupName(members.map { names[$0] ?? "u\($0)" }), sender: sender,
            recipients: people)
    }

    /// The `speakableGroupName` of a group: `A, B and C` for three members or fewer, `A, B, C and 4 others`
    /// beyond.
    static func groupName(_ names: [String]) -> String {
        if names.count <= 3 {
            return names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
        }
        return names.prefix(3).joined(separator: ", ") + " and \(names.count - 3) others"
    }

    /// The tab- or space-separated fields of a line, as byte slices.
    static func fields(_ line: UnsafeBufferPointer<UInt8>, separator: (UInt8) -> Bool, collapse: Bool)
        -> [UnsafeBufferPointer<UInt8>]
    {
        var fields: [UnsafeBufferPointer<UInt8>] = []
        var start = 0
        for index in 0...line.count {
            guard index == line.count || separator(line[index]) else { continue }
            if !collapse || index > start { fields.append(UnsafeBufferPointer(rebasing: line[start..<index])) }
            start = index + 1
        }
        return fields
    }

    /// A whole number of at least 0 written in ASCII digits.
    static func integer(_ field: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !field.isEmpty, field.count <= 18 else { return nil }
        var value = 0
        for byte in field {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// Unix seconds (an integer or a decimal) within the years the contract accepts.
    static func unixTime(_ field: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        // Decimal digits with an optional sign and fraction only: `Double` also reads `0x10`, `1e3`, `inf`, ` 5`.
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        let point = field.firstIndex(of: UInt8(ascii: "."))
        let signed = field.first == UInt8(ascii: "-") ? 1 : 0
        let whole = field[(field.startIndex + signed)..<(point ?? field.endIndex)]
        let fraction = point.map { field[($0 + 1)...] }
        guard !whole.isEmpty, whole.allSatisfy(digits.contains),
            fraction.map({ !$0.isEmpty && $0.allSatisfy(digits.contains) }) ?? true
        else { return nil }
        guard let seconds = Double(String(decoding: field, as: UTF8.self)), seconds.isFinite else { return nil }
        let date = Timestamp(seconds: seconds)
        guard Timestamp.acceptedRange.contains(date) else { return nil }
        return date
    }

    /// A field as text for an error message: 40 bytes at most, printable ASCII as it is and every other byte as
    /// `\xHH`, so that a binary file given by mistake (`convert collegemsg /bin/ls`) leaves no raw bytes, escape
    /// sequences or line breaks in the message.
    static func quoted(_ field: UnsafeBufferPointer<UInt8>) -> String {
        var text = "\""
        for byte in field.prefix(40) {
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return text + (field.count > 40 ? "…\"" : "\"")
    }
}
