import RedisCluster
import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An import into Redis that never finishes is still all or nothing (`ImportJournal`): its journal on the server
/// lets a later command undo it, and a deletion of the account stops one that runs. A probe found a second Ctrl-C
/// or a `kill -9` leaving 80,000 of 200,000 donations, and the same file imported again giving 310,000.
@Suite struct ImportJournalTests {
    /// 40,000 donations without identifiers (eight rounds), of `account`, as a file.
    static func history(_ account: String, in scratch: TemporaryDirectory) throws -> String {
        var lines = ""
        for index in 0..<40_000 {
            lines += #"{"account":"\#(account)","date":\#(1_796_000_000 + index),"direction":"outgoing","#
                + #""intent":{"conversationIdentifier":"c\#(index % 300)"}}"# + "\n"
        }
        let path = scratch("history.jsonl")
        try writeFile(path, lines)
        return path
    }

    /// Starts importing `file` and returns once part of it is recorded (a donation beyond the first).
    static func importPartly(
        _ file: String, account: String, cluster: LocalRedisCluster, scratch: TemporaryDirectory
    ) throws -> (ChildProcess, LocalRedisCluster.Node) {
        let importing = try Suggest.start(["import", file, "--quiet", "--store", cluster.url], scratch: scratch.path)
        let master = try cluster.owner(ofSlot: Int(RedisHashSlot.of("sg:{\(account)}:m"))).node
        let deadline = monotonicSeconds() + 120
        while monotonicSeconds() < deadline,
            (Int(try cluster.cli(master, "HLEN", "sg:{\(account)}:ids").trimmingWhitespace()) ?? 0) <= 1
        {
            sleepSeconds(0.01)
        }
        return (importing, master)
    }

    static func exported(_ account: String, _ cluster: LocalRedisCluster, _ scratch: TemporaryDirectory) throws -> Int {
        let export = try Suggest.run(["export", "--account", account, "--store", cluster.url], scratch: scratch.path)
        #expect(export.status == 0, "\(export)")
        return export.output.split(separator: "\n").count
    }

    @Test func aKilledImportIsUndoneByALaterCommand() throws {
        let cluster = try LocalRedisCluster.shared("store-journal")
        let scratch = try TemporaryDirectory("redis-journal")
        let account = "killed-\(UInt32.random(in: 0...UInt32.max))"
        let kept = try Suggest.run(
            ["donate", "--conversation", "kept", "--identifier", "kept-1", "--account", account, "--store", cluster.url],
            scratch: scratch.path)
        #expect(kept.status == 0, "\(kept)")
        let file = try Self.history(account, in: scratch)
        let (importing, master) = try Self.importPartly(file, account: account, cluster: cluster, scratch: scratch)
        importing.send(SIGKILL)
        _ = importing.wait(timeout: 30)
        let ids = try cluster.cli(master, "SMEMBERS", "sg:{\(account)}:im").split(separator: "\n").map(String.init)
        try #require(ids.count == 1, "one import under way: \(ids)")
        let left = try Self.exported(account, cluster, scratch)
        try #require(left > 1 && left < 40_001, "the killed import left part of itself until its lease runs out: \(left)")
        // Its lease's end moved to the past, as a minute later: the next command's upkeep undoes it.
        _ = try cluster.cli(master, "HSET", "sg:{\(account)}:im:\(ids[0])", "until", "0")
        #expect(try Self.exported(account, cluster, scratch) == 1)
        #expect(try cluster.cli(master, "SCARD", "sg:{\(account)}:im").trimmingWhitespace() == "0")
        #expect(try cluster.cli(master, "EXISTS", "sg:{\(account)}:ij:\(ids[0])").trimmingWhitespace() == "0")
        #expect(try cluster.cli(master, "EXISTS", "sg:{\(account)}:im:\(ids[0])").trimmingWhitespace() == "0")
        // The same file again: all of it, once.
        let again = try Suggest.run(["import", file, "--quiet", "--store", cluster.url], scratch: scratch.path, timeout: 300)
        #expect(again.status == 0, "\(again)")
        #expect(try Self.exported(account, cluster, scratch) == 40_001)
        #expect(try cluster.cli(master, "SCARD", "sg:{\(account)}:im").trimmingWhitespace() == "0")
    }

    /// A deletion of the account while an import runs: the import fails and undoes itself (it finished on top of the
    /// deletion, leaving a state no order of the two commands gives), and nothing of either stays.
    @Test func aDeletionOfTheAccountStopsAnImportUnderWay() throws {
        let cluster = try LocalRedisCluster.shared("store-journal")
        let scratch = try TemporaryDirectory("redis-journal")
        let account = "deleted-\(UInt32.random(in: 0...UInt32.max))"
        let file = try Self.history(account, in: scratch)
        let (importing, master) = try Self.importPartly(file, account: account, cluster: cluster, scratch: scratch)
        let deletion = try Suggest.run(["delete", "--all", "--account", account, "--store", cluster.url], scratch: scratch.path)
        #expect(deletion.status == 0, "\(deletion)")
        let imported = importing.wait(timeout: 300)
        #expect(imported.status == 1 && imported.error.contains("the account was deleted while this import ran"), "\(imported)")
        #expect(try Self.exported(account, cluster, scratch) == 0)
        #expect(try cluster.cli(master, "SCARD", "sg:{\(account)}:im").trimmingWhitespace() == "0")
    }
}

extension ImportJournalTests {
    /// A Redis user with the permissions docs/redis.md gives runs an import; one without `TIME` (which an import's
    /// lease reads) is told what it lacks, where it was told "the account was deleted while this import ran" (an
    /// error reply to the journal's script was taken for a lost lease).
    @Test func aUserWithoutAPermissionIsToldWhatItLacks() throws {
        let cluster = try LocalRedisCluster.shared("store-journal")
        let scratch = try TemporaryDirectory("redis-journal")
        let name = "acl-\(UInt32.random(in: 0...UInt32.max))"
        let permissions = [
            "~sg:*", "+@read", "+@write", "+@scripting", "+@connection", "+info", "+wait", "+config|get",
            "+cluster|slots", "+bgrewriteaof", "+bgsave", "+scan", "+asking", "+readonly",
        ]
        func setUser(_ extra: [String]) throws {
            for node in cluster.nodes {
                _ = try cluster.redisCLI(node, ["ACL", "SETUSER", name, "reset", "on", ">secret-password-1"] + permissions + extra)
            }
        }
        let url = "redis://\(name):secret-password-1@" + cluster.seeds
        let line = #"{"account":"\#(name)","date":1796000000,"direction":"outgoing","intent":{"conversationIdentifier":"c"}}"#
        try setUser([])
        let refused = try Suggest.run(["import", "-", "--store", url], input: Array((line + "\n").utf8), scratch: scratch.path)
        #expect(refused.status == 1 && refused.errorLines.count == 1, "\(refused)")
        #expect(refused.error.contains("the Redis user may not run a command suggest needs"), "\(refused)")
        #expect(refused.error.contains("\"A user of its own\""), "\(refused)")
        try setUser(["+time"])
        let imported = try Suggest.run(["import", "-", "--store", url], input: Array((line + "\n").utf8), scratch: scratch.path)
        #expect(imported.status == 0 && imported.output == "imported 1 donation\n", "\(imported)")
        let listed = try Suggest.run(["list", "--account", name, "--store", url], scratch: scratch.path)
        #expect(listed.status == 0 && listed.output.contains("[c]"), "\(listed)")
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        String(self.drop(while: { $0.isWhitespace }).reversed().drop(while: { $0.isWhitespace }).reversed())
    }
}
