import SuggestCore

/// Renders synthetic donations as the contract's donation JSON Lines, byte by byte.
///
/// Everything it writes is ASCII from fixed word lists and numbers, so no string needs escaping; dates are
/// RFC 3339 in UTC, whole seconds. Per-conversation text (identifiers, names, people) is derived from the
/// conversation's number each time: nothing grows with the history.
struct DonationLineWriter {
    let history: SyntheticHistory
    private var cachedDay = Int64.min
    /// `YYYY-MM-DDT` of `cachedDay`.
    private var dayPrefix: [UInt8] = []

    init(history: SyntheticHistory) { self.history = history }

    /// The longest line this writer can produce, with room to spare.
    static let maximumLineBytes = 4_096

    /// Appends one donation and a newline. `identifier` supplies the 128 random bits of its UUID-form identifier.
    mutating func write(_ donation: SyntheticHistory.Donation, identifier: (UInt64, UInt64), to out: OutputBuffer) {
        let conversation = donation.conversation
        out.append("{\"account\":\"")
        if history.parameters.accounts <= 1 {
            out.append("default")
        } else {
            out.append("account-")
            out.append(decimal: Int(conversation) % history.parameters.accounts)
        }
        out.append("\",\"identifier\":\"")
        writeUUID(identifier, to: out)
        out.append("\",\"groupIdentifier\":\"c-")
        out.append(decimal: Int(conversation))
        out.append("\",\"date\":\"")
        writeDate(donation.date, to: out)
        out.append(donation.direction == .outgoing ? "\",\"direction\":\"outgoing\"" : "\",\"direction\":\"incoming\"")
        if donation.engaged { out.append(",\"engagedSuggestion\":true") }
        out.append(",\"intent\":{\"conversationIdentifier\":\"c-")
        out.append(decimal: Int(conversation))
        out.append("\"")
        let group = history.isGroup(conversation)
        if group {
            out.append(",\"speakableGroupName\":\"")
            out.append(history.groupWords(conversation))
            out.append(UInt8(ascii: " "))
            out.append(decimal: Int(conversation))
            out.append("\"")
        }
        out.append(",\"serviceName\":\"")
        out.append(history.serviceName(conversation))
        out.append("\"")
        let memberCount = history.memberCount(conversation)
        if donation.direction == .incoming {
            let sender = member(conversation, Int(donation.senderMember) % memberCount, group: group)
            out.append(",\"sender\":{\"customIdentifier\":\"p-")
            out.append(decimal: Int(sender))
            out.append("\",\"displayName\":\"")
            writeName(sender, to: out)
            out.append("\"}")
        } else {
            out.append(",\"sender\":{\"customIdentifier\":\"me\",\"isMe\":true}")
        }
        out.append(",\"recipients\":[")
        for index in 0..<memberCount {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            writePerson(member(conversation, index, group: group), to: out)
        }
        out.append("]")
        if group {
            out.append(",\"image\":\"avatars/c-")
            out.append(decimal: Int(conversation))
            out.append(".png\"")
        }
        if donation.contentType >= 0 {
            out.append(",\"contentTypes\":[\"")
            out.append(SyntheticHistory.contentTypes[Int(donation.contentType)])
            out.append("\"]")
        }
        out.append("}}\n")
    }

    @inline(__always)
    private func member(_ conversation: Int32, _ index: Int, group: Bool) -> Int32 {
        guard group else { return conversation }
        let count = UInt64(history.parameters.conversations)
        return Int32(SeededGenerator.hash(history.parameters.seed, UInt64(conversation), 3 + UInt64(index)) % count)
    }

    private func writePerson(_ person: Int32, to out: OutputBuffer) {
        out.append("{\"customIdentifier\":\"p-")
        out.append(decimal: Int(person))
        out.append("\",\"displayName\":\"")
        writeName(person, to: out)
        if person % 2 == 0 {
            out.append("\",\"personHandle\":{\"value\":\"p")
            out.append(decimal: Int(person))
            out.append("@example.com\",\"type\":\"emailAddress\"}}")
        } else {
            out.append("\",\"personHandle\":{\"value\":\"+1555")
            out.append(decimal: Int(person))
            out.append("\",\"type\":\"phoneNumber\"}}")
        }
    }

    @inline(__always)
    private func writeName(_ person: Int32, to out: OutputBuffer) {
        let (first, last) = history.name(person)
        out.append(first)
        out.append(UInt8(ascii: " "))
        out.append(last)
    }

    /// 128 bits in UUID form, marked as a random (version 4) UUID.
    private func writeUUID(_ bits: (UInt64, UInt64), to out: OutputBuffer) {
        out.append(hex: bits.0 >> 32, width: 8)
        out.append(UInt8(ascii: "-"))
        out.append(hex: bits.0 >> 16, width: 4)
        out.append(UInt8(ascii: "-"))
        out.append(hex: bits.0 & 0x0FFF | 0x4000, width: 4)
        out.append(UInt8(ascii: "-"))
        out.append(hex: bits.1 >> 48 & 0x3FFF | 0x8000, width: 4)
        out.append(UInt8(ascii: "-"))
        out.append(hex: bits.1, width: 12)
    }

    private mutating func writeDate(_ seconds: Int64, to out: OutputBuffer) {
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        if day != cachedDay {
            cachedDay = day
            let (year, month, dayOfMonth) = Timestamp.civilFromDays(Int(day))
            // RFC 3339 writes four digits of year (0990, not 990: `import` refuses the short form). A year before
            // 1 is no RFC 3339 date whatever its form; `import` refuses it too.
            let yearDigits = String(year.magnitude)
            let padding = String(repeating: "0", count: max(0, 4 - yearDigits.count))
            let yearText = (year < 0 ? "-" : "") + padding + yearDigits
            let monthText = (month < 10 ? "0" : "") + String(month)
            let dayText = (dayOfMonth < 10 ? "0" : "") + String(dayOfMonth)
            dayPrefix = Array("\(yearText)-\(monthText)-\(dayText)T".utf8)
        }
        dayPrefix.withUnsafeBufferPointer { out.append($0) }
        let second = Int(seconds - day * 86_400)
        out.append(padded: second / 3_600, width: 2)
        out.append(UInt8(ascii: ":"))
        out.append(padded: second / 60 % 60, width: 2)
        out.append(UInt8(ascii: ":"))
        out.append(padded: second % 60, width: 2)
        out.append(UInt8(ascii: "Z"))
    }
}
