import RedisCluster
import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Ctrl-C twice during an import into Redis: the second is only said, and the process goes on taking back what it
/// recorded (its own undoing, up to seconds), where it stopped at once and left half the import (a probe pressed
/// it while the first one's undoing ran: 80,000 of 200,000 donations stayed).
@Suite struct RedisInterruptTests {
    @Test func aSecondInterruptLetsTheImportTakeBackWhatItRecorded() throws {
        let cluster = try LocalRedisCluster.shared("store-cli")
        let scratch = try TemporaryDirectory("redis-interrupt")
        let account = "interrupted-\(UInt32.random(in: 0...UInt32.max))"
        var lines = ""
        for index in 0..<40_000 {
            lines += #"{"account":"\#(account)","date":\#(1_796_000_000 + index),"direction":"outgoing","#
                + #""intent":{"conversationIdentifier":"c\#(index % 300)"}}"# + "\n"
        }
        let file = scratch("history.jsonl")
        try writeFile(file, lines)
        let importing = try Suggest.start(["import", file, "--quiet", "--store", cluster.url], scratch: scratch.path)
        let master = try cluster.owner(ofSlot: Int(RedisHashSlot.of("sg:{\(account)}:m"))).node
        // Once part of it is recorded (the rounds are 5,000 donations).
        let deadline = monotonicSeconds() + 120
        while monotonicSeconds() < deadline,
            (Int(try cluster.cli(master, "HLEN", "sg:{\(account)}:ids").filter(\.isNumber)) ?? 0) < 1_000
        {
            sleepSeconds(0.01)
        }
        importing.send(SIGINT)
        sleepSeconds(0.05)
        importing.send(SIGINT)
        let outcome = importing.wait(timeout: 120)
        #expect(outcome.status == 130, "\(outcome)")
        #expect(outcome.error.contains("interrupted again; stopping cleanly first"), "\(outcome)")
        #expect(outcome.error.contains("interrupted; nothing was imported"), "\(outcome)")
        let export = try Suggest.run(["export", "--account", account, "--store", cluster.url], scratch: scratch.path)
        #expect(export.status == 0 && export.output.isEmpty, "\(export.output.prefix(300))")
        // The account the import made goes with it: its name stayed in the list of accounts, its counters and its
        // stamp.
        let accountsMaster = try cluster.owner(ofSlot: Int(RedisHashSlot.of("sg:accounts"))).node
        #expect(try cluster.cli(accountsMaster, "SISMEMBER", "sg:accounts", account).filter(\.isNumber) == "0")
        let left = try cluster.cli(
            master, "EXISTS", "sg:{\(account)}:m", "sg:{\(account)}:sv", "sg:{\(account)}:cid", "sg:{\(account)}:lw")
        #expect(left.filter(\.isNumber) == "0", "keys of the account left: \(left)")
    }
}
