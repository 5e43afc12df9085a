import Synchronization

/// What every change to an account leaves in its `sv` key (`RedisKeys.stateStamp`), in the script that makes the
/// change: a value no other write of any process has left, so that a ranking mirror built at one stamp
/// (`RedisRankingMirror`) is the account's current state exactly while the key still holds that stamp.
///
/// A counter alone would not do: deleting every key of the store deletes the stamps too, and a counter started
/// again would give an account re-created afterwards the stamp of its former self. Here each process draws 64
/// random bits once and counts from there, so two stamps are equal only if one process made both or two processes
/// drew the same bits (about one chance in 2^64 for each pair).
enum StateStamp {
    private static let process = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// A stamp never given before: this process's bits and how many stamps it gave, in hexadecimal.
    static func next() -> [UInt8] {
        let count = counter.add(1, ordering: .relaxed).newValue
        return Array((String(process, radix: 16) + "." + String(count, radix: 16)).utf8)
    }
}
