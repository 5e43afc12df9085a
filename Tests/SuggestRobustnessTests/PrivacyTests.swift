import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What is deleted is gone: from every byte of every file in the store directory (the database, its -wal and
/// -shm), and from what `list` and `export` show. `eval` reads a file, not the store, so it cannot show it.
@Suite struct PrivacyTests {
    /// Where each of `secrets` still occurs: in which file of the store, or in which command's output.
    static func traces(of secrets: [String], in fixture: StoreFixture, accounts: [String] = ["default"]) throws
        -> [String]
    {
        var found: [String] = []
        for file in try filesIn(fixture.store) {
            for secret in secrets where contains(file.bytes, Array(secret.utf8)) {
                found.append("'\(secret)' in \(file.name)")
            }
        }
        for account in accounts {
            let outputs = [
                (
                    "list",
                    try fixture.succeed([
                        "list", "--json", "--limit", "1000", "--at", Donations.at.rfc3339, "--account", account,
                    ])
                ),
                ("export", try fixture.succeed(["export", "--account", account])),
            ]
            for (command, output) in outputs {
                for secret in secrets where output.contains(secret) {
                    found.append("'\(secret)' in \(command) --account \(account)")
                }
            }
        }
        return found
    }

    /// The secrets that are in no file of the store (none should be before the deletion: else the test proves nothing).
    static func unstored(_ secrets: [String], in fixture: StoreFixture) throws -> [String] {
        let files = try filesIn(fixture.store)
        return secrets.filter { secret in !files.contains { contains($0.bytes, Array(secret.utf8)) } }
    }

    /// Donations that carry distinctive strings: a group name, its later name, people's names, handles, pictures.
    static func secretDonations(
        conversation: String, prefix: String, names: [String], people: [String], start: Double, count: Int = 4,
        groupIdentifier: String? = nil, account: String = "default"
    ) -> [Interaction] {
        (0..<count).map { index in
            Interaction(
                account: account, identifier: "\(prefix)-\(index)", groupIdentifier: groupIdentifier,
                date: Timestamp(seconds: start + Double(index) * 60),
                direction: index % 2 == 0 ? .outgoing : .incoming,
                intent: SendMessageIntent(
                    conversationIdentifier: conversation, speakableGroupName: names[index % names.count],
                    serviceName: "chat.example",
                    recipients: people.map { name in
                        Person(
                            customIdentifier: "id-" + name.lowercased().replacingSpaces, displayName: name,
                            personHandle: .init(
                                value: name.lowercased().replacingSpaces + "@example.org", type: .emailAddress),
                            image: "avatars/\(name.lowercased().replacingSpaces).png")
                    },
                    image: "avatars/\(conversation).png", contentTypes: ["public.jpeg"]))
        }
    }

    /// A store with an ordinary history, keeping everything whatever its age.
    static func storeWithHistory(_ label: String) throws -> StoreFixture {
        let fixture = try StoreFixture(label)
        try fixture.keepEverything()
        try fixture.importLines(Donations.lines(Donations.make(count: 400, prefix: "h", conversations: 40, seed: 31)))
        return fixture
    }

    /// A store made in a directory others can read (made before, or shared): its database, log and index were
    /// 0644, so any user of the machine could read the history. Every file of it is its owner's alone now.
    @Test func aNewStoreInAnOpenDirectoryIsReadableByItsOwnerOnly() throws {
        let fixture = try StoreFixture("privacy-modes")
        let directory = fixture.root("open")
        #expect(mkdir(directory, 0o755) == 0 && chmod(directory, 0o755) == 0)
        let outcome = try Suggest.run(
            ["donate", "--conversation", "c-1", "--store", directory], scratch: fixture.scratch)
        #expect(outcome.status == 0, "\(outcome)")
        let files = try filesIn(directory)
        #expect(files.map(\.name).contains("suggest.sqlite"))
        for file in files {
            var info = stat()
            #expect(stat(directory + "/" + file.name, &info) == 0)
            #expect(info.st_mode & 0o077 == 0, "\(file.name) is \(String(info.st_mode & 0o777, radix: 8))")
        }
    }

    /// A store shared with a group afterwards, as docs/storage.md says, by the database file's mode: its log and
    /// index, which stay between commands, kept 0600, and the group's first command failed (a probe).
    @Test func theLogAndIndexFollowTheDatabaseFilesMode() throws {
        let fixture = try StoreFixture("privacy-group")
        try fixture.succeed(["donate", "--conversation", "c-1"])
        let database = fixture.store + "/suggest.sqlite"
        var info = stat()
        try #require(stat(database + "-wal", &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(chmod(database, 0o660) == 0)
        try fixture.succeed(["list"])
        for file in [database, database + "-wal", database + "-shm"] {
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o660, "\(file) is \(String(info.st_mode & 0o777, radix: 8))")
        }
    }

    /// The store's own small files are never written through a link planted in their place: the deletion reserve
    /// followed one, and filled the file it named with 8 MiB (found by a probe).
    @Test func aLinkInThePlaceOfTheReserveIsNotFollowed() throws {
        let fixture = try StoreFixture("privacy-link")
        try fixture.succeed(["donate", "--conversation", "c-1"])
        let victim = fixture.scratch + "/victim.txt"
        try writeFile(victim, Array("keep me as I am\n".utf8))
        let reserve = fixture.store + "/suggest.sqlite-reserve"
        unlink(reserve)
        #expect(symlink(victim, reserve) == 0)
        try fixture.succeed(["donate", "--conversation", "c-2"])
        try fixture.succeed(["delete", "--conversation", "c-1"])
        #expect(try readFile(victim) == Array("keep me as I am\n".utf8))
    }

    /// A block outlives deletion; lifting it afterwards (or resetting the "suggest less" of a conversation without
    /// donations) removes the conversation's last trace, and its name must leave the files then, as a deletion's
    /// does: a probe found it in the database file after any number of later commands.
    @Test(arguments: [["block", "unblock"], ["feedback --less", "feedback --reset"]])
    func liftingTheLastPreferenceOfADeletedConversationLeavesNoByteOfIt(_ commands: [String]) throws {
        let fixture = try Self.storeWithHistory("privacy-unblock")
        let secret = "conv-axolotl-5521"
        try fixture.importLines(
            Donations.lines(
                Self.secretDonations(
                    conversation: secret, prefix: "axolotl", names: ["Axolotl Fanciers"], people: ["Quentin Ostrich"],
                    start: Donations.start + 1_000)))
        let set = commands[0].split(separator: " ").map(String.init)
        let lift = commands[1].split(separator: " ").map(String.init)
        try fixture.succeed(set + ["--conversation", secret])
        try fixture.succeed(["delete", "--conversation", secret])
        try fixture.succeed(set + ["--conversation", secret])
        try fixture.succeed(["list"])
        #expect(try Self.unstored([secret], in: fixture) == [], "the name is on disk before it is lifted")
        try fixture.succeed(lift + ["--conversation", secret])
        #expect(try Self.traces(of: [secret, "Axolotl Fanciers", "Quentin Ostrich"], in: fixture) == [])
    }

    /// SQLite's `secure_delete` zeroes a row where it is deleted, but a page that SQLite rebuilt to balance its tree
    /// keeps, in its free space, the bytes of rows it moved to another page, and those rows are deleted later where
    /// they went: a probe found 17 of a deleted account's names and addresses in such free space after deleting the
    /// account, which two accounts' donations, recorded in turns, had spread over shared pages. The file is rewritten
    /// after a deletion. (Deleting the whole account of this history leaves no copy even without the rewrite, its
    /// pages freed and zeroed whole: the probe's history did; this one's conversations, deleted one by one, do.)
    @Test func rowsThatSQLiteMovedBeforeTheDeletionLeaveNoCopyInThePages() throws {
        let fixture = try StoreFixture("privacy-moved")
        try fixture.keepEverything()
        var state: UInt64 = 7
        func draw(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        for round in 0..<40 {
            for account in ["victim", "bystander"] {
                let lines = (0..<25).map { index -> String in
                    let n = draw(60)
                    return #"{"account":"\#(account)","identifier":"\#(account)-\#(round)-\#(index)","#
                        + #""date":"2026-11-2\#(index % 4 + 1)T10:00:00Z","direction":"outgoing","#
                        + #""groupIdentifier":"\#(account)grp\#(n % 9)","intent":{"conversationIdentifier":"#
                        + #""\#(account)conv\#(n)","serviceName":"sms","recipients":[{"customIdentifier":"#
                        + #""\#(account)person\#(n)","displayName":"\#(account) Person \#(n)","#
                        + #""personHandle":{"value":"\#(account)\#(n)@ex.com","type":"emailAddress"}}]}}"#
                }
                try fixture.importLines(lines)
            }
        }
        let secrets = (0..<60).flatMap { ["victimperson\($0)\"", "victim\($0)@ex.com", "victimconv\($0)\""] }
        #expect(try Self.unstored(secrets, in: fixture).count < secrets.count, "the secrets are on disk to begin with")
        for n in 0..<60 { try fixture.succeed(["delete", "--account", "victim", "--conversation", "victimconv\(n)"]) }
        #expect(try Self.traces(of: secrets, in: fixture, accounts: ["victim"]) == [])
        #expect(try StoreCheck.count(store: fixture.store, account: "bystander") == 1000)
    }

    @Test func deletingAConversationRemovesItsNamesAndPeopleFromEveryFile() throws {
        let fixture = try Self.storeWithHistory("privacy-conversation")
        let donations = Self.secretDonations(
            conversation: "conv-quokka-4411", prefix: "quokka",
            names: ["Quokka Zanzibar Society", "Zanzibar Quokka Guild"],
            people: ["Ophelia Quarterstaff", "Bartholomew Nightjar"], start: Donations.start + 1_000)
        try fixture.importLines(Donations.lines(donations))
        let secrets = [
            "Quokka Zanzibar Society", "Zanzibar Quokka Guild", "Ophelia Quarterstaff", "Bartholomew Nightjar",
            "ophelia_quarterstaff@example.org", "conv-quokka-4411", "quokka-0",
        ]
        #expect(try Self.unstored(secrets, in: fixture) == [], "the secrets are on disk to begin with")
        try fixture.succeed(["delete", "--conversation", "conv-quokka-4411"])
        #expect(try Self.traces(of: secrets, in: fixture) == [])
        #expect(try StoreCheck.count(store: fixture.store) == 400)
        #expect(try StoreCheck.rankingDifferences(store: fixture.store) == [])
    }

    /// One donation that renamed a conversation and added someone: deleting it by identifier removes that name
    /// and that person, while the conversation stays with its other donations.
    @Test func deletingOneDonationRemovesWhatOnlyItSaid() throws {
        let fixture = try Self.storeWithHistory("privacy-identifier")
        var donations = Self.secretDonations(
            conversation: "c-3", prefix: "keep", names: ["Group 3 v0"], people: ["Person 3"],
            start: Donations.start + 2_000)
        var odd = Self.secretDonations(
            conversation: "c-3", prefix: "secret-id", names: ["Marzipan Heliotrope"],
            people: ["Person 3", "Eustace Pennywhistle"], start: Donations.start + 1_500, count: 1)
        odd[0].identifier = "secret-id-77"
        donations += odd
        try fixture.importLines(Donations.lines(donations))
        let secrets = [
            "Marzipan Heliotrope", "Eustace Pennywhistle", "eustace_pennywhistle@example.org", "secret-id-77",
        ]
        #expect(try Self.unstored(secrets, in: fixture) == [], "the secrets are on disk to begin with")
        try fixture.succeed(["delete", "--identifier", "secret-id-77"])
        #expect(try Self.traces(of: secrets, in: fixture) == [])
        #expect(try fixture.succeed(["export"]).contains("\"keep-3\""))
        #expect(try StoreCheck.rankingDifferences(store: fixture.store) == [])
        #expect(try StoreCheck.rebuildDifferences(of: fixture) == [])
    }

    @Test func deletingAGroupIdentifierRemovesItsDonationsEverywhere() throws {
        let fixture = try Self.storeWithHistory("privacy-group")
        let whole = Self.secretDonations(
            conversation: "conv-narwhal", prefix: "narwhal", names: ["Narwhal Bagpipe Ensemble"],
            people: ["Wilhelmina Snodgrass"], start: Donations.start + 3_000, groupIdentifier: "thread-secret-9")
        let part = Self.secretDonations(
            conversation: "c-6", prefix: "part", names: ["Perpendicular Otter Choir"], people: ["Person 6"],
            start: Donations.start + 3_500, count: 2, groupIdentifier: "thread-secret-9")
        try fixture.importLines(Donations.lines(whole + part))
        let secrets = [
            "Narwhal Bagpipe Ensemble", "Wilhelmina Snodgrass", "conv-narwhal", "Perpendicular Otter Choir",
            "thread-secret-9",
        ]
        #expect(try Self.unstored(secrets, in: fixture) == [], "the secrets are on disk to begin with")
        try fixture.succeed(["delete", "--group-identifier", "thread-secret-9"])
        #expect(try Self.traces(of: secrets, in: fixture) == [])
        #expect(try StoreCheck.count(store: fixture.store) == 400)
        #expect(try StoreCheck.rankingDifferences(store: fixture.store) == [])
    }

    /// An old name of a conversation that was renamed since: deleting everything before the rename removes it.
    @Test func deletingBeforeADateRemovesOldNames() throws {
        let fixture = try StoreFixture("privacy-before")
        try fixture.keepEverything()
        let old = Self.secretDonations(
            conversation: "conv-walrus", prefix: "old", names: ["Antediluvian Walrus Club"],
            people: ["Cornelius Fogbottom"], start: Donations.start - 10_000)
        let new = Self.secretDonations(
            conversation: "conv-walrus", prefix: "new", names: ["Modern Walrus Club"], people: ["Person 1"],
            start: Donations.start + 10_000)
        try fixture.importLines(Donations.lines(old + new))
        let secrets = ["Antediluvian Walrus Club", "Cornelius Fogbottom", "cornelius_fogbottom@example.org", "old-0"]
        #expect(try Self.unstored(secrets, in: fixture) == [], "the secrets are on disk to begin with")
        try fixture.succeed(["delete", "--before", Timestamp(seconds: Donations.start).rfc3339])
        #expect(try Self.traces(of: secrets, in: fixture) == [])
        #expect(try fixture.succeed(["list", "--json", "--at", Donations.at.rfc3339]).contains("Modern Walrus Club"))
    }

    @Test func deletingAllOfAnAccountRemovesItAndLeavesTheOthers() throws {
        let fixture = try Self.storeWithHistory("privacy-all")
        let secret = Self.secretDonations(
            conversation: "conv-ibis", prefix: "ibis", names: ["Ibis Marmalade Circle"],
            people: ["Gwendolyn Thistlewood"],
            start: Donations.start + 100, account: "acct-private")
        try fixture.importLines(Donations.lines(secret))
        let secrets = ["Ibis Marmalade Circle", "Gwendolyn Thistlewood", "conv-ibis"]
        #expect(try Self.unstored(secrets, in: fixture) == [], "the secrets are on disk to begin with")
        try fixture.succeed(["delete", "--all", "--account", "acct-private"])
        let traces = try Self.traces(of: secrets, in: fixture, accounts: ["default", "acct-private"])
        #expect(traces == [])
        // The account's name itself is in no file either (`list --json` repeats the name it was asked for).
        #expect(try filesIn(fixture.store).allSatisfy { !contains($0.bytes, Array("acct-private".utf8)) })
        #expect(try StoreCheck.count(store: fixture.store) == 400)
    }

    @Test func wipingTheStoreRemovesEverything() throws {
        let fixture = try Self.storeWithHistory("privacy-everything")
        let secret = Self.secretDonations(
            conversation: "conv-yak", prefix: "yak", names: ["Yak Harmonica League"], people: ["Ptolemy Brackenridge"],
            start: Donations.start + 100, account: "acct-other")
        try fixture.importLines(Donations.lines(secret))
        try fixture.succeed(["block", "--conversation", "conv-yak", "--account", "acct-other"])
        // Names from the ordinary history too: everything goes.
        let secrets = [
            "Yak Harmonica League", "Ptolemy Brackenridge", "conv-yak", "Group 3 v0", "p7@example.com", "h-12",
        ]
        #expect(try Self.unstored(secrets, in: fixture) == [], "the secrets are on disk to begin with")
        try fixture.succeed(["delete", "--everything"])
        #expect(try Self.traces(of: secrets + ["acct-other"], in: fixture, accounts: []) == [])
        #expect(try Self.traces(of: secrets, in: fixture, accounts: ["default", "acct-other"]) == [])
        #expect(try fixture.succeed(["block", "--list", "--account", "acct-other"]) == "")
    }

    /// The history with conversation `conv-NAME` added, its group named `secrets[0]` and its person `secrets[1]`
    /// (each checked to be on disk), and a read transaction open on it in this process, as another process's read
    /// (a share sheet listing) would be. `withoutMarkers` plants a link to nowhere in each marker's place, as a
    /// directory that takes no new file (`chattr +i` on it, or another user's) leaves them unmade.
    static func storeBeingRead(
        _ label: String, conversation name: String, secrets: [String], withoutMarkers: Bool = false
    ) throws -> (StoreFixture, Database) {
        let fixture = try Self.storeWithHistory(label)
        let donations = Self.secretDonations(
            conversation: "conv-" + name, prefix: name, names: [secrets[0]], people: [secrets[1]],
            start: Donations.start + 1_000)
        try fixture.importLines(Donations.lines(donations))
        #expect(try Self.unstored(secrets, in: fixture) == [])
        if withoutMarkers {
            for marker in ["rewrite", "scrub"] {
                #expect(symlink("/nonexistent-\(getpid())/marker", fixture.store + "/suggest.sqlite-" + marker) == 0)
            }
        }
        let reader = try Database(path: fixture.store + "/suggest.sqlite")
        try reader.execute("BEGIN")
        #expect(try reader.statement("SELECT SUM(count) FROM donation_blocks").scalarInt() == 404)
        return (fixture, reader)
    }

    /// `suggest delete --conversation` while `reader` reads, for `seconds`, then without it.
    /// - Returns: how the command ended, and whether it was still running when the read ended.
    static func delete(
        _ conversation: String, in fixture: StoreFixture, whileReading reader: Database, for seconds: Double
    ) throws -> (ProcessOutcome, waited: Bool) {
        let delete = try fixture.start(["delete", "--conversation", conversation])
        sleepSeconds(seconds)
        let waited = !delete.hasExited
        try reader.execute("COMMIT")
        return (delete.wait(timeout: 40), waited)
    }

    /// Another process in the middle of a read (a share sheet listing) while a conversation is deleted: the delete
    /// waits for it to finish, then scrubs the write-ahead log; nothing of the conversation is left on disk.
    @Test func deletingWhileAnotherProcessReads() throws {
        let secrets = ["Heron Accordion Society", "Montgomery Quillfeather"]
        let (fixture, reader) = try Self.storeBeingRead("privacy-reader", conversation: "heron", secrets: secrets)
        // The deletion is committed 0.3 s in; scrubbing the log waits for the reader's snapshot to end.
        let (outcome, waited) = try Self.delete("conv-heron", in: fixture, whileReading: reader, for: 0.3)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(waited, "the delete did not wait for the reader")
        #expect(try Self.traces(of: secrets, in: fixture) == [])
    }

    /// The same in a store directory where no new file can be made (`chattr +i` on it, or another user's directory
    /// with the user's own store files; here links to nowhere, `storeBeingRead`): the delete cannot note the
    /// scrub it owes for the next command, so it waits for the reader as long as it would for a lock. It gave up
    /// after a second, said that the next command would remove the names, and none did.
    @Test func deletingWhileAnotherProcessReadsWhereNoNoteCanBeMade() throws {
        let secrets = ["Ibis Harmonica Guild", "Ottoline Brackenbury"]
        let (fixture, reader) = try Self.storeBeingRead(
            "privacy-unnoted", conversation: "ibis", secrets: secrets, withoutMarkers: true)
        let (outcome, waited) = try Self.delete("conv-ibis", in: fixture, whileReading: reader, for: 2.5)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(!outcome.error.contains("deleted bytes may stay"), "\(outcome.error)")
        #expect(waited, "the delete did not wait for the reader")
        #expect(try Self.traces(of: secrets, in: fixture) == [])
    }

    /// And when the reader outlasts the wait (30 s, as for a lock): the deletion is done and printed, and the command
    /// fails saying that the bytes stay and that no later command can know it, where it exited 0 promising that the
    /// next command would remove them.
    @Test func aDeletionWhoseDebtNoNoteCanHoldAndNoWaitSettlesFailsSayingSo() throws {
        let (fixture, reader) = try Self.storeBeingRead(
            "privacy-unsettled", conversation: "crane", secrets: ["Crane Ocarina Circle", "Philippa Thistlewood"],
            withoutMarkers: true)
        let outcome = try fixture.start(["delete", "--conversation", "conv-crane"]).wait(timeout: 90)
        try reader.execute("COMMIT")
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.output.contains("deleted 4 donations from 1 conversation"), "\(outcome.output)")
        #expect(
            outcome.error.contains("no later command can know it") && outcome.error.contains("suggest.sqlite-scrub")
                && !outcome.error.contains("the next command that opens the store"),
            "\(outcome.error)")
    }

    /// Regression: a donation whose identifier the account already has is a no-op, yet it used to leave its
    /// conversation (when new), its names and its people in the store: "already recorded; nothing changed", then
    /// no `delete` short of `--everything` could remove them, and its people raised the old conversation in
    /// `list --person`, which a store rebuilt from `export` does not do.
    @Test func aDuplicateIdentifierLeavesNothingBehind() throws {
        let fixture = try Self.storeWithHistory("privacy-duplicate")
        let first = Self.secretDonations(
            conversation: "c-4", prefix: "dup", names: ["Group 4 v0"], people: ["Person 4"],
            start: Donations.start + 50,
            count: 1)
        try fixture.importLines(Donations.lines(first))
        var elsewhere = Self.secretDonations(
            conversation: "conv-orphan", prefix: "dup", names: ["Orphaned Pelican Parade"],
            people: ["Leopold Underhill"], start: Donations.start + 60, count: 1)
        var renamed = Self.secretDonations(
            conversation: "c-4", prefix: "dup", names: ["Renamed Cassowary Club"], people: ["Person 4", "P 3"],
            start: Donations.start + 70, count: 1)
        renamed[0].intent.recipients[1].customIdentifier = "p-3"
        elsewhere[0].identifier = "dup-0"
        renamed[0].identifier = "dup-0"
        let before = try fixture.succeed([
            "list", "--json", "--limit", "1000", "--at", Donations.at.rfc3339, "--person", "p-3",
        ])
        for donation in [elsewhere[0], renamed[0]] {
            let outcome = try fixture.run(["donate", "--json"], input: Array(donation.jsonLine.utf8))
            #expect(outcome.output == "already recorded dup-0; nothing changed\n", "\(outcome)")
        }
        try fixture.importLines(Donations.lines(elsewhere + renamed))
        let secrets = ["Orphaned Pelican Parade", "Leopold Underhill", "conv-orphan", "Renamed Cassowary Club"]
        #expect(try Self.traces(of: secrets, in: fixture) == [])
        #expect(
            try fixture.succeed(["list", "--json", "--limit", "1000", "--at", Donations.at.rfc3339, "--person", "p-3"])
                == before)
        #expect(try StoreCheck.rebuildDifferences(of: fixture) == [])
    }

    /// The message text (`content`) is accepted and never stored.
    @Test func messageTextIsNeverStored() throws {
        let fixture = try StoreFixture("privacy-content")
        let line = """
            {"identifier":"m-1","date":\(Int(Donations.start)),"direction":"outgoing",\
            "intent":{"conversationIdentifier":"c-text","content":"Meet me at the Obsidian Lighthouse at nine"}}
            """
        try fixture.succeed(["donate", "--json"], input: Array(line.utf8))
        try fixture.importLines([line.replacingOccurrences("m-1", with: "m-2")])
        #expect(try Self.traces(of: ["Obsidian Lighthouse"], in: fixture) == [])
        #expect(try StoreCheck.count(store: fixture.store) == 2)
    }
}

extension String {
    /// Spaces as underscores, for identifiers and handles made from names.
    var replacingSpaces: String { String(map { $0 == " " ? "_" : $0 }) }

    func replacingOccurrences(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
