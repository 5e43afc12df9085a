import SuggestCore

/// The names of one account's keys. Every key of an account carries the same hash tag, the account's escaped name
/// in braces, so that all of them live in one slot of the cluster and one script can change them together.
///
///     sg:{alice}:m            hash: seq (the last sequence number), next (the next conversation number)
///     sg:{alice}:cid          hash: conversation identifier → conversation number
///     sg:{alice}:c:N          hash: id, v (version), r (record), i (the intent it is shown by, `ShownDonation`),
///                             dd (the date of its latest donation that describes it), ls (its last sequence
///                             number), pk (people), gk (groups)
///     sg:{alice}:d:N          list: the conversation's donations in recording order
///     sg:{alice}:sn:N         hash: snapshot key → what an intent said of the conversation (JSON)
///     sg:{alice}:z0..z3       sorted sets: every conversation number by its channel key
///     sg:{alice}:zs0:SERVICE  sorted sets: a service's conversations by channel key
///     sg:{alice}:zk0:KIND     sorted sets: the conversations that received a content kind, by channel key
///     sg:{alice}:p:KEY        set: the conversations a person takes part in
///     sg:{alice}:g:GROUP      set: the conversations with donations of a group identifier
///     sg:{alice}:ids          hash: donation identifier → conversation number
///     sg:{alice}:old          sorted set: conversation number by its oldest donation's date
///     sg:{alice}:pref         hash: conversation identifier → "blocked,less"
///     sg:{alice}:sv           string: the stamp of the account's last change (`StateStamp`), which ranking mirrors
///                             compare
///     sg:{alice}:lw           hash: w (the learned weights), v (version), ls (the last sequence number learned
///                             from), fold ("1": to be folded again from the donations)
///     sg:{alice}:lease        string, for a few seconds: the token of the one writer whose recordings may change
///                             the account now (`RedisDonationStore.WriteLease`)
///
/// Names inside keys are escaped (`%` followed by two hex digits for `%`, `{`, `}`, `:` and bytes under 0x21), so
/// that no account can end another's tag and no name can be read as another key's.
struct RedisKeys: Sendable {
    let account: String
    let prefix: String

    init(account: String) {
        self.account = account
        prefix = "sg:{" + RedisKeys.escape(account) + "}"
    }

    var meta: String { prefix + ":m" }
    var conversationNumbers: String { prefix + ":cid" }
    var identifiers: String { prefix + ":ids" }
    var oldest: String { prefix + ":old" }
    var preferences: String { prefix + ":pref" }
    var learnedWeights: String { prefix + ":lw" }
    var stateStamp: String { prefix + ":sv" }
    var writeLease: String { prefix + ":lease" }

    func conversation(_ number: Int64) -> String { prefix + ":c:" + String(number) }
    func donations(_ number: Int64) -> String { prefix + ":d:" + String(number) }
    func snapshots(_ number: Int64) -> String { prefix + ":sn:" + String(number) }
    func person(_ key: String) -> String { prefix + ":p:" + RedisKeys.escape(key) }
    func group(_ identifier: String) -> String { prefix + ":g:" + RedisKeys.escape(identifier) }

    func list(_ list: SortedList) -> String {
        switch list.scope {
        case .all: return prefix + ":z" + String(list.channel)
        case .service(let service): return prefix + ":zs" + String(list.channel) + ":" + RedisKeys.escape(service)
        case .contentKind(let kind): return prefix + ":zk" + String(list.channel) + ":" + RedisKeys.escape(kind)
        }
    }

    /// Every account's name, for `accounts()`, maintenance of every account and `deleteEverything()`: a key of its
    /// own, outside every account's slot.
    static let accounts = "sg:accounts"
    /// The store's settings (retention, the policy fingerprint).
    static let settings = "sg:settings"

    static func escape(_ name: String) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        escaped.reserveCapacity(name.utf8.count)
        // Only ASCII bytes are replaced, so what stays is UTF-8 still.
        for byte in name.utf8 {
            if byte <= 0x20 || byte == 0x25 || byte == 0x7B || byte == 0x7D || byte == 0x3A || byte == 0x7F {
                escaped += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }
}
