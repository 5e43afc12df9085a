import SuggestCore
import Testing

/// Accounts are walls: one store, several histories, and nothing of one is listed, exported, deleted or blocked
/// through another, even where their conversation and donation identifiers are the same.
@Suite struct AccountWallTests {
    /// Two accounts with the same conversation and donation identifiers and different names.
    static func twoAccounts() throws -> StoreFixture {
        let fixture = try StoreFixture("accounts")
        try fixture.keepEverything()
        var lines: [String] = []
        for (account, name, person) in [
            ("alice", "Alpaca Lantern Club", "Anastasia Applewood"),
            ("bob", "Bison Teapot Club", "Barnaby Buttonwillow"),
        ] {
            lines += Donations.lines(
                Donations.make(count: 200, prefix: "x", conversations: 20, seed: 5, account: account))
            lines += Donations.lines(
                PrivacyTests.secretDonations(
                    conversation: "shared-conv", prefix: "same-id", names: [name], people: [person],
                    start: Donations.start + 500, groupIdentifier: "same-group", account: account))
        }
        try fixture.importLines(lines)
        return fixture
    }

    @Test func listAndExportShowOnlyTheirOwnAccount() throws {
        let fixture = try Self.twoAccounts()
        for (account, own, other) in [
            ("alice", "Alpaca Lantern Club", "Bison Teapot Club"),
            ("bob", "Bison Teapot Club", "Alpaca Lantern Club"),
        ] {
            let list = try fixture.succeed([
                "list", "--json", "--limit", "1000", "--at", Donations.at.rfc3339, "--account", account,
            ])
            let export = try fixture.succeed(["export", "--account", account])
            #expect(list.contains(own) && export.contains(own))
            #expect(!list.contains(other) && !export.contains(other), "account \(account) shows another's")
            #expect(!export.contains("\"account\":\"\(account == "alice" ? "bob" : "alice")\""))
            #expect(export.split(separator: "\n").count == 204)
        }
        let none = try fixture.succeed(["export"])
        #expect(none == "", "the default account has nothing of either")
        #expect(try StoreCheck.rankingDifferences(store: fixture.store, accounts: ["alice", "bob"]) == [])
    }

    @Test func deletionsReachOnlyTheirOwnAccount() throws {
        let fixture = try Self.twoAccounts()
        try fixture.succeed(["delete", "--conversation", "shared-conv", "--account", "bob"])
        try fixture.succeed(["delete", "--identifier", "x-7", "--account", "bob"])
        try fixture.succeed(["delete", "--group-identifier", "g-1", "--account", "bob"])
        try fixture.succeed([
            "delete", "--before", Timestamp(seconds: Donations.start + 100).rfc3339, "--account", "bob",
        ])
        #expect(try StoreCheck.count(store: fixture.store, account: "alice") == 204)
        let alice = try fixture.succeed(["export", "--account", "alice"])
        #expect(alice.contains("Alpaca Lantern Club") && alice.contains("\"x-7\""))
        #expect(!(try fixture.succeed(["export", "--account", "bob"])).contains("Bison Teapot Club"))
        // Bob's name is gone from the disk too; Alice's, under the same conversation identifier, stays.
        let files = try filesIn(fixture.store)
        #expect(!files.contains { contains($0.bytes, Array("Bison Teapot Club".utf8)) })
        #expect(files.contains { contains($0.bytes, Array("Alpaca Lantern Club".utf8)) })
        try fixture.succeed(["delete", "--all", "--account", "bob"])
        #expect(try StoreCheck.count(store: fixture.store, account: "bob") == 0)
        #expect(try StoreCheck.count(store: fixture.store, account: "alice") == 204)
        #expect(try StoreCheck.rankingDifferences(store: fixture.store, accounts: ["alice", "bob"]) == [])
        #expect(try StoreCheck.rebuildDifferences(of: fixture, accounts: ["alice", "bob"]) == [])
    }

    @Test func blocksAndFeedbackStayInTheirAccount() throws {
        let fixture = try Self.twoAccounts()
        try fixture.succeed(["block", "--conversation", "shared-conv", "--account", "alice"])
        try fixture.succeed(["feedback", "--less", "--conversation", "c-1", "--account", "alice"])
        let arguments = ["list", "--json", "--limit", "1000", "--at", Donations.at.rfc3339]
        #expect(!(try fixture.succeed(arguments + ["--account", "alice"])).contains("\"shared-conv\""))
        let bob = try fixture.succeed(arguments + ["--account", "bob"])
        #expect(bob.contains("\"shared-conv\""))
        #expect(try fixture.succeed(["block", "--list", "--account", "bob"]) == "")
        #expect(try StoreCheck.rankingDifferences(store: fixture.store, accounts: ["alice", "bob"]) == [])
    }

    /// A donation for one account cannot be slipped into another through `--account`.
    @Test func anExplicitAccountRefusesAnotherAccountsDonation() throws {
        let fixture = try Self.twoAccounts()
        let line =
            #"{"account":"alice","identifier":"sneak","date":\#(Int(Donations.start)),"intent":{"conversationIdentifier":"c-1"}}"#
        let imported = try fixture.run(["import", "-", "--account", "bob"], input: Array((line + "\n").utf8))
        #expect(imported.status == 64 && imported.errorLines.count == 1, "\(imported)")
        let donated = try fixture.run(["donate", "--json", "--account", "bob"], input: Array(line.utf8))
        #expect(donated.status == 64 && donated.errorLines.count == 1, "\(donated)")
        #expect(try StoreCheck.count(store: fixture.store, account: "alice") == 204)
        #expect(try StoreCheck.count(store: fixture.store, account: "bob") == 204)
    }
}
