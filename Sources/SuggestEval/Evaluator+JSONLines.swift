import Dispatch
import Synchronization
import SuggestCore

extension Evaluator {
    /// Reads one line of donation JSON Lines. Blank lines are allowed and give `nil`.
    ///
    /// The date is taken as a store records it (`Timestamp.atExportPrecision`, the microsecond near today), so that
    /// the replay breaks ties as `list` does on the store the file was imported into: two dates apart by less
    /// than a microsecond were two moments here and one there.
    /// - Throws: `InputError` located at `line`: invalid JSON, or a donation the contract rejects.
    /// - Complexity: O(n) in the length of the line.
    static func interaction(jsonLine bytes: UnsafeBufferPointer<UInt8>, line: Int) throws(InputError)
        -> Interaction?
    {
        guard !LineStream.isBlank(bytes) else { return nil }
        do {
            var interaction = try Interaction(jsonBytes: bytes)
            interaction.date = interaction.date.atExportPrecision
            return interaction
        } catch {
            throw error.at(line: line)
        }
    }

    /// Replays every donation of a JSON Lines source, in order.
    /// - Throws: `FileError` when the source cannot be read; `InputError` with the line number for the first
    ///   line that is not a valid donation (the result then holds the lines before it).
    /// - Complexity: O(n) parsing for n donations, plus `consume(_:)` for each.
    public func consumeJSONLines(from source: LineReader.Source) throws {
        try LineReader.forEachLine(in: source) { bytes, line in
            if let interaction = try Self.interaction(jsonLine: bytes, line: line) { try consume(interaction) }
        }
    }

    /// Evaluates several policies on one JSON Lines source, parsing it once.
    /// - Returns: one result per policy, in the order given.
    /// - Throws: as `consumeJSONLines(from:)`; `InputError` for invalid cut-offs.
    public static func evaluate(
        _ source: LineReader.Source, policies: [RankingPolicy], cutoffs: [Int] = EvalResult.defaultCutoffs
    ) throws -> [EvalResult] {
        var evaluators: [Evaluator] = []
        for policy in policies { evaluators.append(try Evaluator(policy: policy, cutoffs: cutoffs)) }
        try LineReader.forEachLine(in: source) { bytes, line in
            guard let interaction = try interaction(jsonLine: bytes, line: line) else { return }
            for evaluator in evaluators { try evaluator.consume(interaction) }
        }
        return evaluators.map(\.result)
    }

    /// Evaluates one policy on a donation JSON Lines file: what `suggest eval FILE --policy NAME` reports.
    /// - Throws: as `consumeJSONLines(from:)`; `InputError` for invalid cut-offs.
    public static func evaluate(
        jsonLinesAt path: String, policy: RankingPolicy, cutoffs: [Int] = EvalResult.defaultCutoffs
    ) throws -> EvalResult {
        let evaluator = try Evaluator(policy: policy, cutoffs: cutoffs)
        try evaluator.consumeJSONLines(from: .file(path))
        return evaluator.result
    }

    /// Evaluates several policies on donations already in memory.
    /// - Returns: one result per policy, in the order given.
    /// - Throws: `InputError` for invalid cut-offs.
    public static func evaluate(
        _ history: some Sequence<Interaction>, policies: [RankingPolicy], cutoffs: [Int] = EvalResult.defaultCutoffs
    ) throws -> [EvalResult] {
        var evaluators: [Evaluator] = []
        for policy in policies { evaluators.append(try Evaluator(policy: policy, cutoffs: cutoffs)) }
        for interaction in history {
            for evaluator in evaluators { try evaluator.consume(interaction) }
        }
        return evaluators.map(\.result)
    }
}

extension Evaluator {
    /// Evaluates policies on a JSON Lines source with two cores: a second thread reads and parses the next
    /// batches of lines while this one replays. Same results as `evaluate(_:policies:cutoffs:)`; parsing costs
    /// about as much as replaying, so this nearly halves the time of `suggest eval` on a big file.
    ///
    /// Memory is bounded whatever the input: two batches of about 4 MiB wait in the pipe, and a line longer than
    /// `LineStream.donationLineLimit` stops the reading (`suggest eval /dev/zero`).
    /// - Throws: as `evaluate(_:policies:cutoffs:)`; the first invalid line stops the replay with its number, and a
    ///   line over the limit is an `InputError` at its number.
    public static func evaluatePipelined(
        _ source: LineReader.Source, policies: [RankingPolicy], cutoffs: [Int] = EvalResult.defaultCutoffs
    ) throws -> [EvalResult] {
        var evaluators: [Evaluator] = []
        for policy in policies { evaluators.append(try Evaluator(policy: policy, cutoffs: cutoffs)) }
        try forEachDonationPipelined(in: source) { donation in
            for evaluator in evaluators { try evaluator.consume(donation) }
        }
        return evaluators.map(\.result)
    }
}

extension Evaluator {
    /// Reads and parses a JSON Lines source on a second thread while `body` replays each donation on this one,
    /// in order: parsing costs about as much as replaying.
    ///
    /// Memory is bounded whatever the input: two batches of about 4 MiB wait in the pipe, and a line longer than
    /// `LineStream.donationLineLimit` stops the reading (`suggest eval /dev/zero`).
    /// - Throws: `FileError` when the source cannot be read; `InputError` with the line number for the first
    ///   line that is not a valid donation or is over the limit, after `body` has seen every line before it.
    static func forEachDonationPipelined(
        in source: LineReader.Source, _ body: (ReplayDonation) throws -> Void
    ) throws {
        let pipe = BatchPipe<[ReplayDonation]>(capacity: 2)
        defer { pipe.cancel() }
        DispatchQueue.global().async {
            do {
                let lines = try LineReader.open(source)
                while let batch = try LineReader.nextBatch(of: lines, from: source) {
                    guard pipe.put(.success(try batch.donations())) else { return }
                    // After the lines before it, so that an earlier invalid line is the error reported.
                    if let line = batch.overlongLine {
                        let limit = LineStream.donationLineLimit >> 20
                        let message = "the line is longer than \(limit) MiB (a donation is a few KB)"
                        throw InputError(field: nil, message: message, line: line)
                    }
                }
                _ = pipe.put(nil)
            } catch {
                _ = pipe.put(.failure(error))
            }
        }
        while let parsed = pipe.take() {
            for donation in try parsed.get() { try body(donation) }
        }
    }
}
