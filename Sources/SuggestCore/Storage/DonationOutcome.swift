/// The outcome of recording one donation.
public enum DonationOutcome: Sendable, Equatable {
    /// Recorded under this identifier (the donation's own, or one the store generated).
    case recorded(identifier: String)
    /// The account already had a donation with this identifier: nothing changed.
    case duplicate(identifier: String)
    /// Older than the store's retention allows: not kept.
    case expired
}

/// What an import (a batch of donations, all or nothing) did.
public struct ImportReport: Sendable, Equatable {
    /// Lines read, blank lines excluded.
    public var read = 0
    /// Donations recorded: new to their account and within the retention.
    public var recorded = 0
    /// Donations whose identifier the account already had: no-ops.
    public var duplicates = 0
    /// Donations older than the store's retention: not kept.
    public var expired = 0
    /// The first `keptRejections` lines refused (only with `skipInvalid`; otherwise the first one aborts the
    /// import): an input of millions of invalid lines must not be held in memory to be reported.
    public private(set) var rejected: [InputError] = []
    /// How many lines were refused, all of them.
    public private(set) var rejectedCount = 0
    /// How many refused lines a report keeps.
    public static let keptRejections = 100

    /// Counts a refused line, and keeps it while fewer than `keptRejections` are kept.
    public mutating func reject(_ error: InputError) {
        rejectedCount += 1
        if rejected.count < Self.keptRejections { rejected.append(error) }
    }

    /// A report of nothing read yet, which an import fills in.
    public init() {}
}

/// How a batch of donations is recorded.
public struct ImportOptions: Sendable {
    /// Keep the valid donations and report the invalid ones instead of recording nothing.
    public var skipInvalid: Bool
    /// The account of donations that name none.
    public var defaultAccount: String
    /// When set, a donation naming another account is invalid (an explicit `--account`, a route's account).
    public var requiredAccount: String?
    /// The moment of recording: retention and the future-date rule are taken against it. Unless it is given, the
    /// clock's when it is read: options an app keeps in a property do not fall behind the clock (a moment fixed
    /// when they were made refused every new donation as "after the store's clock" ten minutes later), and every
    /// store's import fixes it once, at its start (`fixingNow()`).
    public var now: Timestamp {
        get { givenNow ?? .now() }
        set { givenNow = newValue }
    }
    private var givenNow: Timestamp?
    /// Roughly how many donations are coming, when known: a store may prepare for a large import. A hint, kept
    /// between 0 and `largestExpectedDonations`: a store makes room for what it expects at once, and a mistaken
    /// hint (`Int.max`) must neither overflow nor ask for memory a real import would not fill; a larger import
    /// still runs, its store growing as it goes.
    public var expectedDonations: Int? {
        get { expected }
        set { expected = newValue.map { min(max($0, 0), Self.largestExpectedDonations) } }
    }
    private var expected: Int?

    /// The most `expectedDonations` holds: 20M, room that an import's table of identifiers takes in 512 MB.
    public static let largestExpectedDonations = 20_000_000
    /// `progress` is called every this many lines; a value below 1 is taken as 1 (every line).
    public var progressInterval: Int {
        get { everyLines }
        set { everyLines = max(1, newValue) }
    }
    private var everyLines = 100_000

    /// - Parameters:
    ///   - skipInvalid: keep the valid donations and report the invalid ones; by default one invalid line
    ///     records nothing.
    ///   - defaultAccount: the account of donations that name none.
    ///   - requiredAccount: when set, donations naming another account are invalid.
    ///   - now: the moment retention and the future-date rule are taken against; `nil` for the moment each
    ///     import starts.
    ///   - expectedDonations: roughly how many donations are coming, when known.
    ///   - progressInterval: lines between two progress reports; below 1 is taken as 1.
    public init(
        skipInvalid: Bool = false, defaultAccount: String = Interaction.defaultAccount, requiredAccount: String? = nil,
        now: Timestamp? = nil, expectedDonations: Int? = nil, progressInterval: Int = 100_000
    ) {
        self.skipInvalid = skipInvalid
        self.defaultAccount = defaultAccount
        self.requiredAccount = requiredAccount
        givenNow = now
        self.expectedDonations = expectedDonations
        self.progressInterval = progressInterval
    }

    /// These options with `now` fixed: the given moment, or the clock's now. An import reads `now` many times (the
    /// retention cutoff, each line's date) and must read one moment.
    public func fixingNow() -> ImportOptions {
        var options = self
        options.givenNow = now
        return options
    }
}

/// How far an import has come, for progress reports.
public struct ImportProgress: Sendable, Equatable {
    /// Lines read so far.
    public var lines: Int
    /// Bytes of the input read so far (0 from a store that does not count them).
    public var bytesRead: Int
    /// The input's size in bytes, `nil` when unknown (a pipe, or a store that does not say).
    public var totalBytes: Int?

    /// - Parameters:
    ///   - lines: lines read so far.
    ///   - bytesRead: bytes read so far.
    ///   - totalBytes: the input's size, `nil` when unknown.
    public init(lines: Int, bytesRead: Int, totalBytes: Int?) {
        self.lines = lines
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
    }
}
