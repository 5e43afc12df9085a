import SuggestCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `suggest-bench standin`: seeded synthetic stand-ins for the two real histories ranking quality is judged on but
/// that this project does not have, with their published shapes: a company's e-mail over nine months where each
/// person writes to many colleagues (about 165 candidate conversations per send), and a four-week SMS log of a few
/// hundred people (about 3 candidates per send, two thirds of the sends answering the latest incoming message).
///
/// They are models, not data: what they can show is whether a method loses where those shapes put it, not what it
/// would score on the real logs.
enum StandInCommand {
    static let usage = """
        usage: suggest-bench standin --shape mail|sms [--seed S] [--people N] [--output FILE]

        Writes a stand-in history as donation JSON Lines (default: standard output); a summary goes to standard
        error: accounts, donations, sends, the mean number of candidate conversations per send, and the share of
        sends that answer the account's latest incoming message.

          mail   a company of N people (default 200) over 270 days: each person writes, on working days, to
                 colleagues they favour (Zipf over a private order), to project groups (3 to 8 people), and
                 answers part of what they receive; a few senders mail everyone (lists nobody answers). Every
                 message is an outgoing donation of its sender and an incoming one of each recipient.
          sms    N phones (default 300) over 28 days, each with 2 to 5 contacts of unequal weight: threads of
                 messages going back and forth, started by either side; only the phone's own log is written.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(arguments, flags: [], options: ["--shape", "--seed", "--people", "--output"])
        let seed = UInt64(try parsed.integer("--seed", default: 1))
        var donations: [Interaction]
        switch parsed.string("--shape") {
        case "mail":
            donations = mail(people: try parsed.integer("--people", default: 200, range: 10...5_000), seed: seed)
        case "sms":
            donations = sms(people: try parsed.integer("--people", default: 300, range: 1...100_000), seed: seed)
        default:
            throw BenchArguments.UsageError("--shape must be mail or sms")
        }
        // Stable by date: the file is in date order, as a log would be.
        donations = donations.enumerated().sorted {
            $0.element.date != $1.element.date ? $0.element.date < $1.element.date : $0.offset < $1.offset
        }.map(\.element)
        var descriptor: Int32 = 1
        if let path = parsed.string("--output") {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else { throw BenchArguments.UsageError("cannot create \(path)") }
        }
        defer { if descriptor != 1 { close(descriptor) } }
        let out = OutputBuffer(descriptor: descriptor)
        for donation in donations {
            let line = donation.jsonLine + "\n"
            try out.reserve(line.utf8.count)
            out.append(line)
        }
        try out.flush()
        Log.note(summary(donations))
        return 0
    }

    /// Accounts, sends, candidates per send and the share of sends answering the latest incoming donation.
    static func summary(_ donations: [Interaction]) -> String {
        var known: [String: Set<String>] = [:]
        var latestIncoming: [String: String] = [:]
        var sends = 0
        var candidates = 0
        var replies = 0
        var evaluated = 0
        for donation in donations {
            let conversations = known[donation.account] ?? []
            if donation.direction == .outgoing {
                sends += 1
                if conversations.contains(donation.conversationIdentifier) {
                    evaluated += 1
                    candidates += conversations.count
                    if latestIncoming[donation.account] == donation.conversationIdentifier { replies += 1 }
                }
            } else {
                latestIncoming[donation.account] = donation.conversationIdentifier
            }
            known[donation.account, default: []].insert(donation.conversationIdentifier)
        }
        let mean = evaluated > 0 ? Double(candidates) / Double(evaluated) : 0
        let share = evaluated > 0 ? Double(replies) / Double(evaluated) : 0
        return
            "standin: \(known.count) accounts, \(Format.count(donations.count)) donations, \(Format.count(sends)) sends "
            + "(\(Format.count(evaluated)) to a known conversation): \(Format.fixed(mean, 1)) candidates per send, "
            + "\(Format.fixed(share * 100, 1))% answer the latest incoming"
    }

    static let day = 86_400.0
    static let start = 1_767_225_600.0  // 2026-01-01T00:00:00Z

    /// Picks an index with probability proportional to `weights`.
    static func pick(_ weights: [Double], total: Double, _ random: inout SeededGenerator) -> Int {
        var target = random.unit() * total
        for (index, weight) in weights.enumerated() {
            target -= weight
            if target < 0 { return index }
        }
        return weights.count - 1
    }

    /// An exponential gap with the given mean.
    static func gap(mean: Double, _ random: inout SeededGenerator) -> Double {
        -mean * log(max(1e-12, 1 - random.unit()))
    }

    // MARK: mail

    static func mail(people: Int, seed: UInt64) -> [Interaction] {
        var random = SeededGenerator(seed: seed)
        // Everyone favours colleagues in a private order, Zipf(1).
        let favourites: [[Int]] = (0..<people).map { person in
            var others = Array(0..<people).filter { $0 != person }
            others.shuffle(using: &random)
            return others
        }
        let zipf = (1...people).map { 1 / Double($0) }
        let zipfTotal = zipf.dropLast().reduce(0, +)
        // Projects of 3 to 8 people; each person is in a few.
        var projects: [[Int]] = []
        for _ in 0..<(people / 2) {
            let size = 3 + random.below(6)
            var members = Set<Int>()
            while members.count < size { members.insert(random.below(people)) }
            projects.append(members.sorted())
        }
        let projectsOf: [[Int]] = (0..<people).map { person in projects.indices.filter { projects[$0].contains(person) }
        }
        // Heavy and light writers: messages per working day from 2 to 40.
        let rates = (0..<people).map { _ in 2 * pow(20, random.unit()) }
        let lists = [0, 1, 2]  // these senders also mail everyone now and then; nobody answers
        var donations: [Interaction] = []
        var inbox: [[(date: Double, recipients: [Int], sender: Int)]] = Array(repeating: [], count: people)
        var serial = 0

        func send(from sender: Int, to recipients: [Int], at date: Double, subjectIsList: Bool = false) {
            serial += 1
            let everyone = ([sender] + recipients).sorted()
            func conversation(for person: Int) -> (String, String?) {
                let others = everyone.filter { $0 != person }
                if others.count == 1 { return ("u\(others[0])", nil) }
                let name = subjectIsList ? "All staff" : others.prefix(3).map { "u\($0)" }.joined(separator: ", ")
                return ("g" + others.map(String.init).joined(separator: "-"), name)
            }
            let (outgoing, name) = conversation(for: sender)
            donations.append(
                Interaction(
                    account: "u\(sender)", identifier: "mail-\(serial)-u\(sender)", date: Timestamp(seconds: date),
                    direction: .outgoing,
                    intent: SendMessageIntent(
                        conversationIdentifier: outgoing, speakableGroupName: name,
                        recipients: recipients.map { Person(customIdentifier: "u\($0)") })))
            for recipient in recipients {
                let (incoming, name) = conversation(for: recipient)
                donations.append(
                    Interaction(
                        account: "u\(recipient)", identifier: "mail-\(serial)-u\(recipient)",
                        date: Timestamp(seconds: date),
                        direction: .incoming,
                        intent: SendMessageIntent(
                            conversationIdentifier: incoming, speakableGroupName: name,
                            recipients: everyone.filter { $0 != recipient }.map { Person(customIdentifier: "u\($0)") }))
                )
                if !subjectIsList { inbox[recipient].append((date, recipients, sender)) }
            }
        }

        // Events of a day, in order of time: everyone's sends at random working-hour moments.
        for dayIndex in 0..<270 {
            let weekday = (dayIndex + 4) % 7  // 2026-01-01 is a Thursday
            guard weekday < 5 else { continue }
            var moments: [(Double, Int)] = []
            for person in 0..<people {
                let count = Int((rates[person] * (0.5 + random.unit())).rounded())
                for _ in 0..<count {
                    moments.append((start + Double(dayIndex) * day + 8 * 3_600 + random.unit() * 10 * 3_600, person))
                }
            }
            if random.below(3) == 0 {
                moments.append((start + Double(dayIndex) * day + 9 * 3_600, -1 - lists[random.below(lists.count)]))
            }
            moments.sort { $0.0 < $1.0 }
            for (date, person) in moments {
                if person < 0 {
                    let sender = -1 - person
                    send(from: sender, to: (0..<people).filter { $0 != sender }, at: date, subjectIsList: true)
                    continue
                }
                let roll = random.unit()
                let recent = inbox[person].filter { date - $0.date < 2 * day && date > $0.date }
                if roll < 0.35, !recent.isEmpty {
                    // A reply: usually to one of the latest few, to the sender alone or to all.
                    let message = recent[recent.count - 1 - min(recent.count - 1, random.below(4))]
                    let all = random.below(3) == 0
                    let recipients =
                        all ? ([message.sender] + message.recipients).filter { $0 != person } : [message.sender]
                    send(from: person, to: Array(Set(recipients)).sorted(), at: date)
                } else if roll < 0.6, !projectsOf[person].isEmpty {
                    let project = projects[projectsOf[person][min(projectsOf[person].count - 1, random.below(2))]]
                    send(from: person, to: project.filter { $0 != person }, at: date)
                } else {
                    let colleague = favourites[person][pick(Array(zipf.dropLast()), total: zipfTotal, &random)]
                    send(from: person, to: [colleague], at: date)
                }
                if inbox[person].count > 64 { inbox[person].removeFirst(inbox[person].count - 64) }
            }
        }
        return donations
    }

    // MARK: sms

    static func sms(people: Int, seed: UInt64) -> [Interaction] {
        var random = SeededGenerator(seed: seed)
        var donations: [Interaction] = []
        for phone in 0..<people {
            let contacts = 2 + random.below(4)
            // Unequal weights: the first contact (a partner, a parent) far ahead.
            let weights = (1...contacts).map { 1 / pow(Double($0), 1.3) }
            let total = weights.reduce(0, +)
            var date = start + random.unit() * day
            let end = start + 28 * day
            var serial = 0
            while date < end {
                // A thread with one contact, started by either side, going back and forth.
                let contact = pick(weights, total: total, &random)
                var incoming = random.unit() < 0.2
                let length = 1 + Int(gap(mean: 3, &random))
                for _ in 0..<length {
                    serial += 1
                    donations.append(
                        Interaction(
                            account: "p\(phone)", identifier: "sms-\(phone)-\(serial)", date: Timestamp(seconds: date),
                            direction: incoming ? .incoming : .outgoing,
                            intent: SendMessageIntent(
                                conversationIdentifier: "p\(phone)-c\(contact)", serviceName: "sms",
                                recipients: [Person(customIdentifier: "c\(contact)")])))
                    // The other side answers, or the same side writes again (a second text).
                    if random.unit() < 0.6 { incoming.toggle() }
                    date += gap(mean: 120, &random)
                }
                // Until the next thread: minutes to hours; sometimes another starts while one is open.
                date += random.unit() < 0.15 ? gap(mean: 60, &random) : gap(mean: 3 * 3_600, &random)
            }
        }
        return donations
    }
}
