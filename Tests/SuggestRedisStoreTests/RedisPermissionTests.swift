import SuggestTestSupport
import Testing

/// A Redis user of its own (docs/redis.md, "A user of its own"): the permissions given there run every command,
/// and a user without one of them is told what it lacks, where it got Redis's `NOPERM` with no advice (a probe of
/// the store as an operator).
@Suite struct RedisPermissionTests {
    static let permissions = [
        "~sg:*", "+@read", "+@write", "+@scripting", "+@connection", "+info", "+wait", "+config|get",
        "+cluster|slots", "+bgrewriteaof", "+bgsave", "+slowlog", "+scan", "+asking", "+readonly",
    ]

    @Test func aUserWithoutAPermissionIsToldWhatItLacks() throws {
        let cluster = try LocalRedisCluster.shared("store-cli")
        let scratch = try TemporaryDirectory("redis-permissions")
        let name = "acl-\(UInt32.random(in: 0...UInt32.max))"
        func setUser(_ permissions: [String]) throws {
            for node in cluster.nodes {
                _ = try cluster.redisCLI(node, ["ACL", "SETUSER", name, "reset", "on", ">secret-password-1"] + permissions)
            }
        }
        let url = "redis://\(name):secret-password-1@" + cluster.seeds
        let line = #"{"account":"\#(name)","date":1796000000,"direction":"outgoing","intent":{"conversationIdentifier":"c"}}"#
        try setUser(Self.permissions.filter { $0 != "+config|get" })
        let refused = try Suggest.run(["import", "-", "--store", url], input: Array((line + "\n").utf8), scratch: scratch.path)
        #expect(refused.status == 1 && refused.errorLines.count == 1, "\(refused)")
        #expect(refused.error.contains("the Redis user may not run a command suggest needs"), "\(refused)")
        #expect(refused.error.contains("\"A user of its own\""), "\(refused)")
        try setUser(Self.permissions)
        let imported = try Suggest.run(["import", "-", "--store", url], input: Array((line + "\n").utf8), scratch: scratch.path)
        #expect(imported.status == 0 && imported.output == "imported 1 donation\n", "\(imported)")
        for arguments in [
            ["list", "--account", name], ["block", "--account", name, "--conversation", "c"],
            ["unblock", "--account", name, "--conversation", "c"], ["feedback", "--less", "--account", name, "--conversation", "c"],
            ["delete", "--account", name, "--all"],
        ] {
            let outcome = try Suggest.run(arguments + ["--store", url], scratch: scratch.path)
            #expect(outcome.status == 0, "\(arguments): \(outcome)")
        }
        // A user that may not rewrite the nodes' files: the deletion is done, and said to leave its bytes in them
        // (it was "a node busy or down", exit 0, and the names stayed in the files for good).
        try setUser(Self.permissions.filter { $0 != "+bgrewriteaof" })
        let again = try Suggest.run(["import", "-", "--store", url], input: Array((line + "\n").utf8), scratch: scratch.path)
        #expect(again.status == 0, "\(again)")
        let deleted = try Suggest.run(["delete", "--account", name, "--conversation", "c", "--store", url], scratch: scratch.path)
        #expect(deleted.status == 1 && deleted.errorLines.count == 1, "\(deleted)")
        #expect(deleted.error.contains("deleted, but the Redis user may not run BGREWRITEAOF"), "\(deleted)")
        let listed = try Suggest.run(["list", "--account", name, "--store", url], scratch: scratch.path)
        #expect(listed.status == 0, "reading goes on: \(listed)")
        // A preference's change is made and said so: its rewrite stays owed (an unblock that erased the last trace
        // reported the rewrite's refusal, and its retry "nothing changed").
        for arguments in [["block", "--conversation", "zz"], ["unblock", "--conversation", "zz"]] {
            let changed = try Suggest.run(arguments + ["--account", name, "--store", url], scratch: scratch.path)
            #expect(changed.status == 0, "\(arguments): \(changed)")
        }
        // Nor write the note that owes the rewrite to the next upkeep: said so, with what to do (it was said left to
        // the next upkeep, which nothing told to rewrite).
        let readOnlySettings = ["~sg:{*", "~sg:accounts", "%R~sg:settings"]
        try setUser(Self.permissions)
        let noted = try Suggest.run(
            ["import", "-", "--store", url], input: Array((line + "\n").utf8), scratch: scratch.path)
        #expect(noted.status == 0, "\(noted)")
        try setUser(readOnlySettings + Self.permissions.filter { $0 != "+bgrewriteaof" && $0 != "~sg:*" })
        // A setting it may not write is refused (the refusal was read as a reply: "33" printed, 90 kept).
        let setting = try Suggest.run(["config", "--max-age-days", "33", "--store", url], scratch: scratch.path)
        #expect(setting.status == 1 && setting.error.contains("may not run"), "\(setting)")
        let unnoted = try Suggest.run(["delete", "--account", name, "--all", "--store", url], scratch: scratch.path)
        #expect(unnoted.status == 1 && unnoted.errorLines.count == 1, "\(unnoted)")
        #expect(
            unnoted.error.contains("may not run BGREWRITEAOF")
                && unnoted.error.contains("the note that owes the rewrite could not be written"),
            "\(unnoted)")
        // So is an unblock that erased a name's last trace (it said "unblocked", exit 0, and the name stayed in the
        // nodes' files after any maintenance).
        let block = try Suggest.run(
            ["block", "--conversation", "zz-unnoted", "--account", name, "--store", url], scratch: scratch.path)
        #expect(block.status == 0, "\(block)")
        let unblocked = try Suggest.run(
            ["unblock", "--conversation", "zz-unnoted", "--account", name, "--store", url], scratch: scratch.path)
        #expect(
            unblocked.status == 1 && unblocked.error.contains("the note that owes the rewrite could not be written"),
            "\(unblocked)")
        try setUser(Self.permissions)
        let export = try Suggest.run(["export", "--account", name, "--store", url], scratch: scratch.path)
        #expect(export.status == 0 && export.output.isEmpty, "\(export)")
        // Nor run one of the commands inside the script that records: refused before it writes anything, naming
        // the command. Redis takes back nothing of a script that fails midway: the donation's identifier and its
        // conversation's names stayed, a retry was "already recorded", and no deletion reached them.
        try setUser(Self.permissions + ["-rpush"])
        let partial = ["donate", "--account", name, "--conversation", "half", "--identifier", "half-1", "--store", url]
        let refusedScript = try Suggest.run(partial, scratch: scratch.path)
        #expect(refusedScript.status == 1 && refusedScript.error.contains("RPUSH"), "\(refusedScript)")
        try setUser(Self.permissions)
        let retried = try Suggest.run(partial, scratch: scratch.path)
        #expect(retried.status == 0 && retried.output == "recorded half-1\n", "\(retried)")
        // Nor empty the nodes' slow logs, which keep the keys of slow scripts in memory.
        try setUser(Self.permissions.filter { $0 != "+slowlog" })
        let more = try Suggest.run(["import", "-", "--store", url], input: Array((line + "\n").utf8), scratch: scratch.path)
        #expect(more.status == 0, "\(more)")
        let unlogged = try Suggest.run(["delete", "--account", name, "--all", "--store", url], scratch: scratch.path)
        #expect(unlogged.status == 1 && unlogged.errorLines.count == 1, "\(unlogged)")
        #expect(unlogged.error.contains("deleted, but the Redis user may not run SLOWLOG (GET and RESET)"), "\(unlogged)")
        try setUser(Self.permissions)
    }
}
