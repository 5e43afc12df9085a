import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

/// Every store gives the same answers to the bit from the same history: the same suggestions (scores, explanations,
/// tie-breaks) for every context, the same export bytes, the same reports, through recordings, imports, deletions of
/// every kind, blocks, feedback and retention. `InMemoryDonationStore` is the reference: it keeps the donations alone
/// and folds them again for every query, so it is right by construction; each durable store must match it.
@Suite struct StoreConformanceTests {
    /// The end of the generated histories: every query runs near it.
    static let end = Timestamp(seconds: 1_796_000_000)

    /// The stores under test, each fresh: SQLite in a temporary directory (and the Redis Cluster store, when one is
    /// running, in `RedisConformanceTests`).
    static func sqliteStore() throws -> (SQLiteDonationStore, TemporaryDirectory) {
        let directory = try TemporaryDirectory("conformance")
        return (try SQLiteDonationStore.open(StoreLocation(directory: directory.path)), directory)
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func sqliteMatchesTheReference(seed: UInt64) throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try StoreConformance(seed: seed).run(reference: InMemoryDonationStore(), candidate: sqlite)
    }

    @Test func sqliteWalksRowsOfAnotherPolicyToTheEnd() throws {
        let directory = try TemporaryDirectory("stale")
        let location = StoreLocation(directory: directory.path)
        try StoreConformance.walksRowsOfAnotherPolicyToTheEnd { try SQLiteDonationStore.open(location, ranking: $0) }
        // The server's mirror, built from the same rows (a new directory: the history is written again).
        let mirroredDirectory = try TemporaryDirectory("stale-mirror")
        let mirror = RankingMirror(.init(readsBeforeRebuild: 1))
        try StoreConformance.walksRowsOfAnotherPolicyToTheEnd(
            open: {
                let location = StoreLocation(directory: mirroredDirectory.path)
                return try SQLiteDonationStore.open(location, ranking: $0, mirror: mirror)
            },
            settle: { store in _ = try store.refreshMirror() })
        #expect(mirror.statistics.hits > 0)
    }

    @Test func sqliteRecordsAShareOnlyToAConversationThatStillExists() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try StoreConformance.recordsSharesOnlyToExistingConversations(reference: InMemoryDonationStore(), candidate: sqlite)
    }

    @Test func sqliteFindsTheConversationOfADonation() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try StoreConformance.findsTheConversationOfADonation(reference: InMemoryDonationStore(), candidate: sqlite)
    }

    @Test func sqliteKeepsEquivalentSpellingsApartInOneWrite() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        let (reference, candidate) = try StoreConformance.keepingEverything(sqlite)
        try StoreConformance.keepsEquivalentSpellingsApartInOneWrite(reference: reference, candidate: candidate)
    }

    @Test func sqliteFindsAPersonAmongTheSenders() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        let (reference, candidate) = try StoreConformance.keepingEverything(sqlite)
        try StoreConformance.findsAPersonAmongTheSenders(reference: reference, candidate: candidate)
    }

    @Test func sqliteRecordsDatesAtExportPrecision() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        let (reference, candidate) = try StoreConformance.keepingEverything(sqlite)
        try StoreConformance.recordsDatesAtExportPrecision(reference: reference, candidate: candidate)
    }

    @Test func sqliteShowsTheLatestDonationThatDescribes() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try StoreConformance.showsTheLatestDonationThatDescribes(reference: InMemoryDonationStore(), candidate: sqlite)
    }

    @Test func sqliteHoldsAnImportToItsRequiredAccount() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try StoreConformance.holdsAnImportToItsRequiredAccount(reference: InMemoryDonationStore(), candidate: sqlite)
    }

    @Test func sqliteForgetsSuggestLessWithADeletedConversation() throws {
        let (sqlite, directory) = try Self.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try StoreConformance.forgetsSuggestLessWithDeletion(reference: InMemoryDonationStore(), candidate: sqlite)
    }
}

extension StoreConformance {
    /// The reference and `candidate`, both keeping every donation and hiding no idle conversation: the tests of
    /// one rule run on a history dated long before the clock.
    static func keepingEverything<Candidate: DonationStore>(_ candidate: Candidate) throws -> (InMemoryDonationStore, Candidate) {
        let reference = InMemoryDonationStore()
        for store in [reference, candidate] as [any DonationStore] {
            _ = try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: StoreConformanceTests.end)
        }
        return (reference, candidate)
    }
}

extension StoreConformance {
    /// Two canonically equivalent spellings (`é` composed, and `e` with a combining accent) of a group identifier,
    /// a service, a person and a content type are two names, also when one write brings both: the Redis store's
    /// script took them for one key, so the decomposed group could not be deleted by its identifier, `--service`
    /// and `--person` found the other spelling's conversation, and its names stayed in the other key (a probe);
    /// and a content type asked for in one spelling lifted the conversation of the other on Redis and not on
    /// SQLite (a differential fuzz).
    static func keepsEquivalentSpellingsApartInOneWrite(
        reference: some DonationStore, candidate: some DonationStore
    ) throws {
        let end = StoreConformanceTests.end
        let donations = [("n1", "c1", "\u{E9}"), ("n2", "c2", "e\u{301}")].enumerated().map { index, names in
            Interaction(
                account: "a", identifier: names.0, groupIdentifier: "caf" + names.2, date: end.adding(Double(index - 60)),
                direction: .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: names.1, serviceName: "svc" + names.2,
                    recipients: [Person(customIdentifier: "jos" + names.2)], contentTypes: ["org.caf" + names.2]))
        }
        for store in [reference, candidate] as [any DonationStore] {
            _ = try store.importDonations(donations, options: ImportOptions(now: end))
        }
        for context in [
            RankingContext(at: end, serviceName: "svce\u{301}"), RankingContext(at: end, serviceName: "svc\u{E9}"),
            RankingContext(at: end, people: ["jose\u{301}"]), RankingContext(at: end, people: ["jos\u{E9}"]),
            RankingContext(at: end, people: ["jos\u{E9}", "jose\u{301}"]),
            RankingContext(at: end, contentTypes: ["org.caf\u{E9}"]), RankingContext(at: end, contentTypes: ["org.cafe\u{301}"]),
        ] {
            let expected = try reference.suggestions(account: "a", context: context)
            let actual = try candidate.suggestions(account: "a", context: context)
            #expect(actual == expected, "\(context)")
            #expect(actual.suggestions.map { Array($0.conversationIdentifier.utf8) } == expected.suggestions.map { Array($0.conversationIdentifier.utf8) })
            // Each spelling raises its own conversation; both, both.
            if !context.people.isEmpty {
                let raised = actual.suggestions.filter { $0.score > 0.5 }
                #expect(raised.count == context.people.count, "\(context.people): \(actual)")
            }
            if let kind = context.contentTypes.first {
                let own = kind.hasSameBytes(as: "org.caf\u{E9}") ? "c1" : "c2"
                #expect(actual.suggestions.first?.conversationIdentifier == own, "\(kind.unicodeScalars.count): \(actual)")
                #expect(actual.suggestions.count == 2 && actual.suggestions[1].score < 0.5, "\(actual)")
            }
        }
        for store in [reference, candidate] as [any DonationStore] {
            #expect(try store.delete(.groupIdentifier("cafe\u{301}"), account: "a").donations == 1)
            var left: [[UInt8]] = []
            try store.forEachDonation(account: "a") { left.append(Array($0.jsonLine.utf8)) }
            #expect(left.count == 1 && String(decoding: left[0], as: UTF8.self).contains(#""n1""#))
        }
    }
}

extension StoreConformance {
    /// A conversation's people are its recipients and the senders who are not the user: one known only from
    /// messages Ann sent, donated with their sender (as apps donate a received message), is raised by a photo of
    /// Ann; the user's own entry raises nothing. (A context's people were looked up among the recipients alone.)
    /// After a deletion that rebuilds the conversation, the same.
    static func findsAPersonAmongTheSenders(reference: some DonationStore, candidate: some DonationStore) throws {
        let end = StoreConformanceTests.end
        let ann = Person(customIdentifier: "u-1", displayName: "Ann", personHandle: .init(value: "ann@example.com"))
        let me = Person(customIdentifier: "me", isMe: true)
        var donations: [Interaction] = []
        for step in 0..<3 {
            donations.append(
                Interaction(
                    account: "a", identifier: "ann-\(step)", date: end.adding(Double(step * 60 - 7_200)), direction: .incoming,
                    intent: SendMessageIntent(conversationIdentifier: "ann", sender: ann)))
        }
        for step in 0..<8 {
            donations.append(
                Interaction(
                    account: "a", identifier: "bob-\(step)", date: end.adding(Double(step * 60 - 600)), direction: .outgoing,
                    intent: SendMessageIntent(
                        conversationIdentifier: "bob", sender: me,
                        recipients: [me, Person(customIdentifier: "u-2"), Person(customIdentifier: " ")])))
        }
        for store in [reference, candidate] as [any DonationStore] {
            _ = try store.importDonations(donations, options: ImportOptions(now: end))
        }
        func first(_ people: [String]) throws -> String? {
            let context = RankingContext(at: end, people: people)
            let expected = try reference.suggestions(account: "a", context: context)
            let actual = try candidate.suggestions(account: "a", context: context)
            #expect(actual == expected, "\(people)")
            return actual.suggestions.first?.conversationIdentifier
        }
        #expect(try first([]) == "bob")
        #expect(try first(["u-1"]) == "ann")
        #expect(try first(["ann@example.com"]) == "ann")
        // The user's own entry, and a blank identifier, name nobody: nothing is raised.
        #expect(try first(["me"]) == "bob")
        #expect(try first([" "]) == "bob")
        for store in [reference, candidate] as [any DonationStore] {
            let explained = try store.suggestions(
                account: "a", context: RankingContext(at: end, people: ["me", " "]), explain: true)
            #expect(explained.suggestions.allSatisfy { $0.explanation?.matchedPeople == 0 }, "\(explained)")
        }
        for store in [reference, candidate] as [any DonationStore] {
            _ = try store.delete(.identifier("ann-0"), account: "a")
        }
        #expect(try first(["u-1"]) == "ann")
    }

    /// Every store records a donation's date as `export` writes it (to the microsecond), whichever way it came: a
    /// line of JSON Lines, an array, one donation, a date from the future taken as the moment. An import that kept
    /// a date's nanoseconds (SQLite) ranked otherwise than the Redis store, which rounded them, with the same
    /// export; and that export, imported again, ranked otherwise than the store it came from.
    static func recordsDatesAtExportPrecision(reference: some DonationStore, candidate: some DonationStore) throws {
        let end = StoreConformanceTests.end
        // A moment of recording off the microsecond grid: a date just ahead of it is recorded as of it, rounded.
        let now = end.adding(0.000_000_4)
        let lines = """
            {"account":"a","identifier":"l1","date":\(end.seconds - 7_200.1234567),"direction":"incoming","intent":{"conversationIdentifier":"a"}}
            {"account":"a","identifier":"l2","date":"\(Timestamp(seconds: end.seconds - 7_200).rfc3339.dropLast())\
            .1234566Z","direction":"incoming","intent":{"conversationIdentifier":"b"}}
            {"account":"a","identifier":"l3","date":\(end.seconds + 60.0000004),"direction":"outgoing","intent":{"conversationIdentifier":"c"}}
            """
        let array = [
            Interaction(
                account: "a", identifier: "r1", date: end.adding(-3_600.0000003), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "d"))
        ]
        let single = Interaction(
            account: "a", identifier: "s1", date: end.adding(-1_800.0000007), direction: .incoming,
            intent: SendMessageIntent(conversationIdentifier: "e"))
        for store in [reference, candidate] as [any DonationStore] {
            _ = try store.importJSONLines(
                from: MemoryJSONLines(bytes: Array(lines.utf8)), options: ImportOptions(now: now),
                progress: { _ in }, interruption: {})
            _ = try store.importDonations(array, options: ImportOptions(now: now))
            _ = try store.record(single, now: now)
        }
        let context = RankingContext(at: end.adding(100))
        let expected = try reference.suggestions(account: "a", context: context)
        #expect(try candidate.suggestions(account: "a", context: context) == expected)
        var exported: [Interaction] = []
        try candidate.forEachDonation(account: "a") { exported.append($0) }
        #expect(exported.count == 5 && exported.allSatisfy { $0.date == $0.date.atExportPrecision })
        // What the export writes, read back into a new store, ranks as the store did.
        var written: [UInt8] = []
        for donation in exported {
            var writer = JSONWriter()
            donation.write(to: &writer)
            written += writer.bytes + [10]
        }
        let again = InMemoryDonationStore()
        _ = try again.importJSONLines(
            from: MemoryJSONLines(bytes: written), options: ImportOptions(now: now), progress: { _ in },
            interruption: {})
        #expect(try again.suggestions(account: "a", context: context) == expected)
    }

    /// A conversation is shown by its latest donation that describes it (a group name, a picture, recipients):
    /// a message received with its sender only blanked the name, picture and people of a suggestion and of the
    /// share's preselection. A rename shows at once, an older one arriving late does not, one arriving late but
    /// later than the last that described does; a deletion folds the rest again; a conversation nothing has
    /// described shows its latest. Every store answers as the reference at each step.
    static func showsTheLatestDonationThatDescribes(reference: some DonationStore, candidate: some DonationStore) throws {
        let end = StoreConformanceTests.end
        let juan = Person(customIdentifier: "u-17", displayName: "Juan Chavez")
        let sender = Person(customIdentifier: "u-17", displayName: "Juan")
        func donation(_ identifier: String, _ conversation: String, at offset: Double, _ direction: InteractionDirection,
                      name: String? = nil, recipients: [Person] = [], image: String? = nil) -> Interaction {
            Interaction(
                account: "a", identifier: identifier, date: end.adding(offset), direction: direction,
                intent: SendMessageIntent(
                    conversationIdentifier: conversation, speakableGroupName: name,
                    serviceName: direction == .incoming ? "mail" : "sms",
                    sender: direction == .incoming ? sender : nil, recipients: recipients, image: image))
        }
        // (donation, or a deletion of an identifier; then the conversation's expected name and recipients' names)
        let steps: [(Interaction?, String?, String?, [String])] = [
            (donation("d1", "c", at: -100, .outgoing, name: "Climbing", recipients: [juan], image: "c.png"), nil, "Climbing", ["Juan Chavez"]),
            (donation("d2", "c", at: -90, .incoming), nil, "Climbing", ["Juan Chavez"]),
            // An empty picture, a person with no field, the user alone: none of them says who the conversation is.
            (donation("d2b", "c", at: -89, .incoming, image: ""), nil, "Climbing", ["Juan Chavez"]),
            (donation("d2c", "c", at: -88, .incoming, recipients: [Person()]), nil, "Climbing", ["Juan Chavez"]),
            (donation("d2d", "c", at: -87, .incoming, recipients: [Person(customIdentifier: "me", isMe: true)]), nil,
             "Climbing", ["Juan Chavez"]),
            // Nor does a blank group name, picture or person (shown as none, they took the name, picture and people).
            (donation("d2e", "c", at: -88.6, .incoming, name: "  "), nil, "Climbing", ["Juan Chavez"]),
            (donation("d2f", "c", at: -88.4, .incoming, image: " "), nil, "Climbing", ["Juan Chavez"]),
            (donation("d2g", "c", at: -88.2, .incoming, recipients: [Person(displayName: " \t")]), nil, "Climbing",
             ["Juan Chavez"]),
            (donation("d3", "c", at: -95, .outgoing, name: "Late rename"), nil, "Late rename", []),
            (donation("d4", "c", at: -99, .outgoing, name: "Older still"), nil, "Late rename", []),
            (donation("d5", "c", at: -80, .outgoing, name: "Bouldering", recipients: [juan]), nil, "Bouldering", ["Juan Chavez"]),
            (nil, "d5", "Late rename", []),
            (nil, "d3", "Older still", []),
            (nil, "d1", "Older still", []),
            (nil, "d4", nil, []),
            (donation("e1", "bare", at: -50, .incoming), nil, nil, []),
            // A describing donation's blank name is none in what is shown, JSON included (it showed "  ").
            (donation("n1", "blank-name", at: -40, .outgoing, name: "  ", recipients: [juan]), nil, nil, ["Juan Chavez"]),
        ]
        for store in [reference, candidate] as [any DonationStore] {
            for (step, (recorded, deleted, name, people)) in steps.enumerated() {
                if let recorded { _ = try store.record(recorded, now: end) }
                if let deleted { _ = try store.delete(.identifier(deleted), account: "a") }
                let listed = try store.suggestions(account: "a", context: RankingContext(at: end))
                let shown = listed.suggestions.first { $0.conversationIdentifier == (recorded?.conversationIdentifier ?? "c") }
                #expect(shown != nil, "step \(step)")
                #expect(shown?.speakableGroupName == name, "step \(step): \(String(describing: shown))")
                #expect(shown?.recipients.compactMap(\.displayName) == people, "step \(step)")
                // The service named is the latest donation's, the one a context filters on, whoever shows it.
                let service = try store.suggestions(account: "a", context: RankingContext(at: end, serviceName: shown?.serviceName))
                #expect(service.suggestions.contains { $0.conversationIdentifier == shown?.conversationIdentifier }, "step \(step)")
            }
            let after = try store.suggestions(account: "a", context: RankingContext(at: end))
            #expect(after.suggestions.first { $0.conversationIdentifier == "c" }?.serviceName == "mail")
        }
    }

    /// `conversation(ofDonation:account:)`, which tells a retried share send from an identifier reused for another
    /// conversation: found by the identifier's bytes (a composed and a decomposed spelling are two), per account,
    /// and gone with a deletion.
    static func findsTheConversationOfADonation(reference: some DonationStore, candidate: some DonationStore) throws {
        let end = StoreConformanceTests.end
        for store in [reference, candidate] as [any DonationStore] {
            for (index, (identifier, conversation)) in [("caf\u{E9}", "c-1"), ("cafe\u{301}", "c-2"), ("s-9", "c-3")]
                .enumerated()
            {
                _ = try store.record(
                    Interaction(
                        account: "a", identifier: identifier, date: end.adding(Double(index)), direction: .outgoing,
                        intent: SendMessageIntent(conversationIdentifier: conversation)),
                    now: end.adding(10))
            }
            #expect(try store.conversation(ofDonation: "caf\u{E9}", account: "a") == "c-1")
            #expect(try store.conversation(ofDonation: "cafe\u{301}", account: "a") == "c-2")
            #expect(try store.conversation(ofDonation: "s-9", account: "b") == nil)
            #expect(try store.conversation(ofDonation: "s-10", account: "a") == nil)
            _ = try store.delete(.conversation("c-3"), account: "a")
            #expect(try store.conversation(ofDonation: "s-9", account: "a") == nil)
        }
    }

    /// A share's donation is written only while its conversation has a donation, checked in the write itself: a
    /// send that read the suggestion before a deletion committed recorded the deleted conversation again, with its
    /// names (found by a probe racing `share --send` against `delete --conversation`). Here the deletion falls
    /// between the suggestion and the write.
    static func recordsSharesOnlyToExistingConversations(
        reference: some DonationStore, candidate: some DonationStore
    ) throws {
        let end = StoreConformanceTests.end
        for store in [reference, candidate] as [any DonationStore] {
            let first = Interaction(
                account: "alice", identifier: "d1", date: end.adding(-3_600), direction: .incoming,
                intent: SendMessageIntent(conversationIdentifier: "secret", speakableGroupName: "Deleted Name"))
            _ = try store.importDonations([first], options: ImportOptions(now: end))
            let share = Interaction(
                account: "alice", identifier: "s1", date: end.adding(-60), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "secret", speakableGroupName: "Deleted Name"),
                isEngagedSuggestion: true)
            _ = try store.delete(.conversation("secret"), account: "alice")
            #expect(try store.recordShare(share, now: end) == nil)
            #expect(try store.donationCount(account: "alice") == 0)
            #expect(try store.conversationStatus(account: "alice", conversationIdentifier: "secret", at: end) == .unknown)
            // While it exists, the share is recorded as any donation.
            _ = try store.importDonations([first], options: ImportOptions(now: end))
            #expect(try store.recordShare(share, now: end) == .recorded(identifier: "s1"))
            #expect(try store.donationCount(account: "alice") == 2)
            // A canonically equivalent spelling is another conversation, which has no donation.
            var composed = first
            composed.identifier = "d2"
            composed.intent.conversationIdentifier = "caf\u{E9}"
            _ = try store.importDonations([composed], options: ImportOptions(now: end))
            var decomposed = share
            decomposed.identifier = "s2"
            decomposed.intent.conversationIdentifier = "cafe\u{301}"
            #expect(try store.recordShare(decomposed, now: end) == nil)

            // A share takes the group identifier its conversation's donations carry, when they carry exactly one: an
            // app that deletes a thread by it left the shares sent to it, and the thread in the list (a probe).
            let threaded = Interaction(
                account: "alice", identifier: "t1", groupIdentifier: "g-thread", date: end.adding(-3_000),
                direction: .incoming, intent: SendMessageIntent(conversationIdentifier: "thread"))
            var forked = threaded
            forked.identifier = "t2"
            forked.groupIdentifier = "g-other"
            forked.intent.conversationIdentifier = "forked"
            var alsoForked = forked
            alsoForked.identifier = "t3"
            alsoForked.groupIdentifier = "g-third"
            _ = try store.importDonations([threaded, forked, alsoForked], options: ImportOptions(now: end))
            var toThread = share
            toThread.identifier = "s3"
            toThread.intent.conversationIdentifier = "thread"
            #expect(try store.recordShare(toThread, now: end) == .recorded(identifier: "s3"))
            _ = try store.delete(.groupIdentifier("g-thread"), account: "alice")
            #expect(try store.conversationStatus(account: "alice", conversationIdentifier: "thread", at: end) == .unknown)
            // Two of them: the share takes neither, and stays when either goes.
            var toForked = share
            toForked.identifier = "s4"
            toForked.intent.conversationIdentifier = "forked"
            #expect(try store.recordShare(toForked, now: end) == .recorded(identifier: "s4"))
            _ = try store.delete(.groupIdentifier("g-other"), account: "alice")
            _ = try store.delete(.groupIdentifier("g-third"), account: "alice")
            #expect(try store.conversation(ofDonation: "s4", account: "alice") == "forked")
        }
    }

    /// An import from memory that names its account (`ImportOptions.requiredAccount`) refuses a donation of another
    /// account, as an import of JSON Lines does: all or nothing, or skipped with `skipInvalid`. The SQLite store
    /// recorded it in its own account.
    static func holdsAnImportToItsRequiredAccount(reference: some DonationStore, candidate: some DonationStore) throws {
        let end = StoreConformanceTests.end
        let donations = ["alice", "bob"].map { account in
            Interaction(
                account: account, identifier: "from-\(account)", date: end.adding(-60), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c"))
        }
        for store in [reference, candidate] as [any DonationStore] {
            let strict = ImportOptions(requiredAccount: "alice", now: end)
            let refused = #expect(throws: InputError.self) { try store.importDonations(donations, options: strict) }
            #expect(refused?.field == "account" && refused?.line == 2, "\(String(describing: refused))")
            #expect(try store.donationCount(account: "alice") == 0 && store.donationCount(account: "bob") == 0)
            let skipping = ImportOptions(skipInvalid: true, requiredAccount: "alice", now: end)
            let report = try store.importDonations(donations, options: skipping)
            #expect(report.recorded == 1 && report.rejectedCount == 1)
            #expect(try store.donationCount(account: "bob") == 0)
        }
    }

    /// "Suggest Less" goes with a conversation deleted as a whole, and with every conversation of a deleted account,
    /// whether they had donations or not (one given before any donation stayed, its name on disk, after `delete
    /// --conversation` said there was nothing to delete); a block stays, and other deletions keep it. Seen through
    /// the count `suggestLess` answers: 1 once forgotten.
    static func forgetsSuggestLessWithDeletion(reference: some DonationStore, candidate: some DonationStore) throws {
        let end = StoreConformanceTests.end
        let donated = (0..<3).map { index in
            Interaction(
                account: "alice", identifier: "d\(index)", date: end.adding(-Double(index + 1) * 3_600), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "kept"))
        }
        for store in [reference, candidate] as [any DonationStore] {
            _ = try store.importDonations(donated, options: ImportOptions(now: end))
            for conversation in ["never-donated", "kept", "blocked-too", "other-account"] {
                let account = conversation == "other-account" ? "bob" : "alice"
                _ = try store.suggestLess(conversation: conversation, account: account)
                _ = try store.suggestLess(conversation: conversation, account: account)
            }
            try store.setBlocked(true, conversation: "blocked-too", account: "alice")
        }
        func counts(_ label: String) throws {
            for (conversation, account) in [("never-donated", "alice"), ("kept", "alice"), ("blocked-too", "alice"), ("other-account", "bob")] {
                // Asking again answers the count, then the same reset on both keeps them comparable.
                let expected = try reference.suggestLess(conversation: conversation, account: account)
                let actual = try candidate.suggestLess(conversation: conversation, account: account)
                #expect(expected == actual, "\(label): \(conversation) in \(account)")
            }
        }
        // The report says whether preferences went, donations or not: "nothing to delete" was printed for a
        // conversation whose "suggest less" was the only trace left, and was then forgotten.
        for (selector, label, forgets) in [
            (DeletionSelector.before(end.adding(-10 * 86_400)), "an older-than deletion keeps it", false),
            (.conversation("never-donated"), "a conversation without donations", true),
            (.all, "the whole account", true),
        ] {
            let expected = try reference.delete(selector, account: "alice")
            let actual = try candidate.delete(selector, account: "alice")
            #expect(expected.donations == actual.donations, "\(label)")
            #expect(expected.preferencesForgotten == forgets, "\(label)")
            #expect(actual.preferencesForgotten == forgets, "\(label)")
            try counts(label)
        }
        #expect(try reference.suggestLess(conversation: "never-donated", account: "alice") == 2)
        #expect(try candidate.blockedConversations(account: "alice") == ["blocked-too"])
        #expect(try candidate.suggestLess(conversation: "other-account", account: "bob") == 6)
        // The whole account (the server's DELETE of it) takes its blocks too, and leaves the other account alone.
        for store in [reference, candidate] as [any DonationStore] {
            #expect(try store.delete(.account, account: "alice").preferencesForgotten)
            #expect(try store.delete(.account, account: "alice").preferencesForgotten == false)
            #expect(try store.blockedConversations(account: "alice") == [])
            #expect(try store.suggestLess(conversation: "kept", account: "alice") == 1)
            #expect(try store.suggestLess(conversation: "other-account", account: "bob") > 1)
        }
        // A conversation removed entirely takes its "suggest less" with it, and the report lists it there: when that
        // was the account's only preference, none is left to report (the SQLite store counted it again, the Redis
        // store did not, and their servers answered the same DELETE differently).
        for store in [reference, candidate] as [any DonationStore] {
            _ = try store.importDonations([donated[0]], options: ImportOptions(now: end))
            _ = try store.suggestLess(conversation: "kept", account: "alice")
            let gone = try store.delete(.account, account: "alice")
            #expect(gone.removedConversations == ["kept"] && !gone.preferencesForgotten, "\(gone)")
        }
    }
}

extension StoreConformance {
    /// A store that owes a rebuild to a changed policy answers from rows built under the policy before, as they
    /// are, until its upkeep has rebuilt them; their keys say nothing of their dates under the new one, so the
    /// walk must not stop where the new policy's keys would say the rest is idle. Here the old policy's second
    /// channel counted only shares started from a suggestion (every key `-∞`) and the new one's counts every
    /// message: the stop read the first `-∞` as "every conversation is idle" and answered nothing.
    /// - Parameters:
    ///   - open: opens the store under test with a ranking (twice: to write the history, then to read it).
    ///   - settle: what the store under the new ranking needs between a first query and the next (a mirror's
    ///     refresh).
    static func walksRowsOfAnotherPolicyToTheEnd<Store: DonationStore>(
        open: (StoreRanking) throws -> Store, settle: (Store) throws -> Void = { _ in }
    ) throws {
        let day = 86_400.0
        let now = StoreConformanceTests.end
        func ranking(_ second: FrecencyPolicy.Channel) throws -> StoreRanking {
            .fixed(try FrecencyPolicy(channels: [.init(name: "all", halfLife: day, weight: 1, incoming: 1), second]))
        }
        let before = try ranking(
            .init(name: "engaged", halfLife: 30 * day, weight: 1, outgoing: 0, incoming: 0, engagedBonus: 1))
        let after = try ranking(.init(name: "recent", halfLife: day, weight: 1, incoming: 1))
        do {
            let store = try open(before)
            _ = try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 30), now: now)
            for number in 0..<203 {
                let age = number < 200 ? 40 * day + Double(number) * 60 : Double(number - 200) * day
                _ = try store.record(
                    Interaction(
                        account: "default", identifier: "d\(number)", date: now.adding(-age), direction: .outgoing,
                        intent: SendMessageIntent(conversationIdentifier: "c\(number)")),
                    now: now)
            }
        }
        let active: Set = ["c200", "c201", "c202"]
        let context = RankingContext(at: now)
        func listed(_ store: Store) throws -> Set<String> {
            Set(try store.suggestions(account: "default", context: context).suggestions.map(\.conversationIdentifier))
        }
        func keysFollow(_ store: Store) throws -> Bool {
            try store.withRankingSource(account: "default") { try $0.keysFollowThePolicy() }
        }
        let store = try open(after)
        #expect(try store.owesRebuild())
        #expect(try listed(store) == active)
        try settle(store)
        #expect(try listed(store) == active)
        #expect(try !keysFollow(store))
        // Rebuilt, the keys are the new policy's, and the walk may stop at the idle cutoff again.
        _ = try store.maintain(account: nil, now: now, budget: .unbounded)
        #expect(try !store.owesRebuild())
        try settle(store)
        #expect(try listed(store) == active)
        #expect(try keysFollow(store))
    }
}

/// A seeded script of operations run against two stores side by side, comparing everything they answer after each
/// step. Shared by the conformance tests of every store.
struct StoreConformance {
    let seed: UInt64
    static let accounts = ["default", "alice", "Ålice"]
    static let services = ["sms", "chat.example", "mail"]
    static let types = ["public.jpeg", "public.png", "public.url", "com.adobe.pdf", "public.movie", "org.example.custom"]

    /// Runs the script.
    /// - Parameter steps: how many operations after the first import.
    func run(reference: some DonationStore, candidate: some DonationStore, steps: Int = 40) throws {
        var random = SeededRandom(seed: seed)
        let retention = Retention(maximumAgeDays: 0, idleDays: 0)
        try expectEqual(
            try reference.setRetention(retention, now: StoreConformanceTests.end),
            try candidate.setRetention(retention, now: StoreConformanceTests.end), "retention off")
        var next = 0
        let first = (0..<300).map { _ in donation(&random, number: &next) }
        try expectEqual(
            try reference.importDonations(first), try candidate.importDonations(first), "the first import")
        try compare(reference, candidate, &random, step: "after the first import")
        for step in 0..<steps {
            let label = "step \(step)"
            switch Int.random(in: 0..<12, using: &random) {
            case 0, 1, 2:
                let donation = donation(&random, number: &next)
                try expectEqual(
                    try reference.record(donation, now: StoreConformanceTests.end),
                    try candidate.record(donation, now: StoreConformanceTests.end), "\(label): record")
            case 3:
                // A batch with repeats of known identifiers: duplicates, never second donations.
                var batch = (0..<Int.random(in: 1...40, using: &random)).map { _ in donation(&random, number: &next) }
                if next > 10 { batch.append(donation(&random, number: &next, repeating: Int.random(in: 0..<(next - 5), using: &random))) }
                try expectEqual(
                    try reference.importDonations(batch, options: ImportOptions(now: StoreConformanceTests.end)),
                    try candidate.importDonations(batch, options: ImportOptions(now: StoreConformanceTests.end)),
                    "\(label): import")
            case 4, 5:
                let account = Self.accounts.randomElement(using: &random) ?? "default"
                let selector = deletion(&random, numbered: next)
                try expectEqual(
                    try reference.delete(selector, account: account), try candidate.delete(selector, account: account),
                    "\(label): delete \(selector) in \(account)")
                try expectEqual(
                    try reference.learnedWeights(account: account), try candidate.learnedWeights(account: account),
                    "\(label): learned weights of \(account) after delete \(selector)")
            case 6:
                let account = Self.accounts.randomElement(using: &random) ?? "default"
                let conversation = "c\(Int.random(in: 0..<25, using: &random))"
                let blocked = Bool.random(using: &random)
                try reference.setBlocked(blocked, conversation: conversation, account: account)
                try candidate.setBlocked(blocked, conversation: conversation, account: account)
            case 7:
                let account = Self.accounts.randomElement(using: &random) ?? "default"
                let conversation = "c\(Int.random(in: 0..<25, using: &random))"
                if Bool.random(using: &random) {
                    try expectEqual(
                        try reference.suggestLess(conversation: conversation, account: account),
                        try candidate.suggestLess(conversation: conversation, account: account), "\(label): less")
                } else {
                    try reference.resetFeedback(conversation: conversation, account: account)
                    try candidate.resetFeedback(conversation: conversation, account: account)
                }
            case 8:
                // Retention: a maximum age that expires the oldest donations, then maintenance of one account.
                let days = Double(Int.random(in: 20...60, using: &random))
                let change = Retention(maximumAgeDays: days, idleDays: Double(Int.random(in: 0...40, using: &random)))
                try expectEqual(
                    try reference.setRetention(change, now: StoreConformanceTests.end),
                    try candidate.setRetention(change, now: StoreConformanceTests.end), "\(label): retention")
                let later = StoreConformanceTests.end.adding(Double(Int.random(in: 1...5, using: &random)) * 86_400)
                let account = Self.accounts.randomElement(using: &random)
                try expectEqual(
                    try reference.maintain(account: account, now: later, budget: .unbounded).expired,
                    try candidate.maintain(account: account, now: later, budget: .unbounded).expired,
                    "\(label): maintenance")
                for name in Self.accounts {
                    try expectEqual(
                        try reference.learnedWeights(account: name), try candidate.learnedWeights(account: name),
                        "\(label): learned weights of \(name) after expiry")
                }
                try reference.setRetention(retention, now: StoreConformanceTests.end)
                try candidate.setRetention(retention, now: StoreConformanceTests.end)
            case 9:
                // Invalid lines: all or nothing, then the valid ones with skipInvalid.
                var batch = (0..<5).map { _ in donation(&random, number: &next) }
                batch.insert(
                    Interaction(
                        account: "default", identifier: "future-\(next)", date: StoreConformanceTests.end.adding(86_400),
                        direction: .outgoing, intent: SendMessageIntent(conversationIdentifier: "c1")), at: 2)
                for skip in [false, true] {
                    let options = ImportOptions(skipInvalid: skip, now: StoreConformanceTests.end)
                    let expected = Result { try reference.importDonations(batch, options: options) }
                    let actual = Result { try candidate.importDonations(batch, options: options) }
                    #expect(
                        String(describing: expected) == String(describing: actual), "\(label): import, skip \(skip)")
                }
            default:
                try compare(reference, candidate, &random, step: label)
            }
        }
        try compare(reference, candidate, &random, step: "at the end")
    }

    /// One random donation: a few accounts, conversations with groups and renames, content, services, people.
    func donation(_ random: inout SeededRandom, number: inout Int, repeating: Int? = nil) -> Interaction {
        let index = repeating ?? number
        if repeating == nil { number += 1 }
        var local = SeededRandom(seed: seed &* 1_000_003 &+ UInt64(index))
        let conversation = Int.random(in: 0..<25, using: &local)
        let isGroup = conversation % 4 == 0
        let recipients = (0..<(isGroup ? 3 : 1)).map { offset in
            Person(
                customIdentifier: "p\((conversation + offset * 7) % 30)", displayName: "Person \(conversation + offset)",
                personHandle: .init(value: "p\(conversation + offset)@example.com", type: .emailAddress))
        }
        // Dates on a coarse grid so that ties happen; a few out of order.
        let date = StoreConformanceTests.end.adding(-Double(Int.random(in: 0..<400, using: &local)) * 3 * 3600)
        var interaction = Interaction(
            account: Self.accounts[Int.random(in: 0..<10, using: &local) < 7 ? 0 : Int.random(in: 1...2, using: &local)],
            identifier: "d\(index)", groupIdentifier: Bool.random(using: &local) ? "g\(conversation % 5)" : nil, date: date,
            direction: [InteractionDirection.outgoing, .incoming, .unspecified].randomElement(using: &local) ?? .outgoing,
            intent: SendMessageIntent(
                conversationIdentifier: "c\(conversation)",
                speakableGroupName: isGroup ? "Group \(conversation) v\(Int.random(in: 0..<3, using: &local))" : nil,
                serviceName: Self.services.randomElement(using: &local), recipients: recipients,
                image: Bool.random(using: &local) ? "avatars/\(conversation).png" : nil,
                contentTypes: Bool.random(using: &local) ? [Self.types.randomElement(using: &local) ?? "public.jpeg"] : []),
            isEngagedSuggestion: Int.random(in: 0..<8, using: &local) == 0)
        // A third say nothing of their conversation (`SendMessageIntent.describesConversation`), as a message
        // received with its sender only: which donation a conversation is shown by must agree too.
        switch Int.random(in: 0..<9, using: &local) {
        case 0, 1, 2:
            interaction.intent.speakableGroupName = nil
            interaction.intent.image = [nil, ""].randomElement(using: &local) ?? nil
            interaction.intent.recipients = [[], [Person()], [Person(customIdentifier: "me", isMe: true)]]
                .randomElement(using: &local) ?? []
            interaction.intent.sender = Person(customIdentifier: "p\(conversation % 30)")
        default:
            break
        }
        return interaction
    }

    func deletion(_ random: inout SeededRandom, numbered count: Int) -> DeletionSelector {
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1, 2: return .conversation("c\(Int.random(in: 0..<25, using: &random))")
        case 3, 4: return .identifier("d\(Int.random(in: 0..<max(count, 1), using: &random))")
        case 5, 6: return .groupIdentifier("g\(Int.random(in: 0..<5, using: &random))")
        case 7, 8: return .before(StoreConformanceTests.end.adding(-Double(Int.random(in: 20...50, using: &random)) * 86_400))
        default: return .all
        }
    }

    /// Everything both stores answer, compared.
    func compare(
        _ reference: some DonationStore, _ candidate: some DonationStore, _ random: inout SeededRandom, step: String
    ) throws {
        try expectEqual(try reference.accounts(), try candidate.accounts(), "\(step): accounts")
        for account in Self.accounts {
            try expectEqual(
                try reference.donationCount(account: account), try candidate.donationCount(account: account),
                "\(step): count of \(account)")
            try expectEqual(try export(reference, account), try export(candidate, account), "\(step): export of \(account)")
            try expectEqual(
                try reference.blockedConversations(account: account), try candidate.blockedConversations(account: account),
                "\(step): blocked in \(account)")
            // The learned weights to the bit (the suggestions below show them again, in their explanations).
            try expectEqual(
                try reference.learnedWeights(account: account), try candidate.learnedWeights(account: account),
                "\(step): learned weights of \(account)")
            for context in contexts(&random) {
                let expected = try reference.suggestions(account: account, context: context, explain: true)
                let actual = try candidate.suggestions(account: account, context: context, explain: true)
                try expectEqual(expected, actual, "\(step): suggestions of \(account) for \(context)")
                try expectEqual(
                    try candidate.rankedConversations(account: account, context: context),
                    try candidate.suggestionsByBruteForce(account: account, context: context),
                    "\(step): the walk against brute force in \(account) for \(context)")
            }
            for conversation in ["c0", "c3", "c24", "nobody"] {
                try expectEqual(
                    try reference.conversationStatus(account: account, conversationIdentifier: conversation, at: StoreConformanceTests.end),
                    try candidate.conversationStatus(account: account, conversationIdentifier: conversation, at: StoreConformanceTests.end),
                    "\(step): status of \(conversation) in \(account)")
            }
        }
    }

    func contexts(_ random: inout SeededRandom) -> [RankingContext] {
        let at = StoreConformanceTests.end.adding(Double(Int.random(in: -48...48, using: &random)) * 3600)
        return [
            RankingContext(at: at),
            RankingContext(at: at, limit: 30),
            RankingContext(at: at, limit: 5, contentTypes: [Self.types.randomElement(using: &random) ?? "public.png"]),
            RankingContext(at: at, limit: 6, contentTypes: ["public.url", "org.example.custom", "public.movie"]),
            RankingContext(at: at, limit: 8, people: ["p3", "p7@example.com", "nobody"]),
            RankingContext(at: at, limit: 8, serviceName: Self.services.randomElement(using: &random)),
            RankingContext(at: at, limit: 4, contentTypes: ["public.jpeg"], serviceName: "sms", excluded: ["c1", "c2"]),
            RankingContext(at: at, limit: 8, notIdleSince: at.adding(-10 * 86_400)),
        ]
    }

    func export(_ store: some DonationStore, _ account: String) throws -> [String] {
        var lines: [String] = []
        try store.forEachDonation(account: account) { lines.append($0.jsonLine) }
        return lines
    }

    func expectEqual<T: Equatable>(_ expected: T, _ actual: T, _ what: String) throws {
        #expect(expected == actual, "\(what)")
        if expected != actual { throw HarnessError("\(what): the stores differ; see the expectation above") }
    }
}
