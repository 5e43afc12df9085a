import SuggestCore

extension RedisDonationStore {
    /// Records a batch: every donation is read and checked first (an invalid one, unless skipped, stops the batch
    /// before anything is written), then they are written a chunk at a time, each conversation's part of a chunk by
    /// one script.
    ///
    /// Redis has no transaction across a batch's scripts: a batch is all or nothing for invalid input (nothing is
    /// written before every donation is checked), and when the store fails part-way (a full server, a node lost for
    /// longer than the client's retries) or the caller interrupts it, what the batch had recorded is deleted again.
    /// Other clients may have seen those donations meanwhile; and if the undoing fails too, the error says so:
    /// importing the same donations again then completes the batch (a donation's identifier makes it a no-op the
    /// second time).
    public func importDonations(
        _ options: ImportOptions, progress: (ImportProgress) -> Void, interruption: () throws -> Void,
        next: () throws -> NumberedDonation?
    ) throws -> ImportReport {
        let options = options.fixingNow()
        var report = ImportReport()
        var accepted: [Interaction] = []
        let oldestKept = try retention().oldestKept(at: options.now)
        while let numbered = try next() {
            let (line, parsed) = (numbered.line, numbered.donation)
            report.read += 1
            if report.read & 255 == 0 { try interruption() }
            if report.read % options.progressInterval == 0 {
                progress(ImportProgress(lines: report.read, bytesRead: 0, totalBytes: nil))
            }
            switch try options.admit(parsed, line: line, oldestKept: oldestKept, into: &report) {
            case .some(let interaction): accepted.append(interaction)
            case .none: break
            }
        }
        try writingRounds(into: &report) { rounds, written in
            var start = 0
            while start < accepted.count {
                try interruption()
                let end = min(start + Self.chunkSize, accepted.count)
                try rounds.write(Array(accepted[start..<end]), store: self, ledger: &written)
                start = end
            }
        }
        return report
    }

    /// JSON Lines in two passes over the input: the first reads and checks every line, keeping the valid ones in a
    /// temporary file (an invalid line stops the import before anything is written); the second records them from
    /// that file, a chunk at a time.
    public func importJSONLines(
        from lines: some JSONLineSource, options: ImportOptions, progress: (ImportProgress) -> Void,
        interruption: () throws -> Void
    ) throws -> ImportReport {
        let options = options.fixingNow()
        var report = ImportReport()
        let oldestKept = try retention().oldestKept(at: options.now)
        let spool = try Spool()
        while let next = try lines.nextDonation(defaultAccount: options.defaultAccount) {
            let (line, parsed) = (next.line, next.donation)
            report.read += 1
            if report.read & 255 == 0 { try interruption() }
            if report.read % options.progressInterval == 0 {
                progress(ImportProgress(lines: report.read, bytesRead: lines.bytesRead, totalBytes: lines.totalBytes))
            }
            if let interaction = try options.admit(parsed, line: line, oldestKept: oldestKept, into: &report) {
                var writer = JSONWriter()
                interaction.write(to: &writer)
                try spool.append(writer.bytes)
            }
        }
        try spool.rewind()
        try writingRounds(into: &report) { rounds, written in
            var chunk: [Interaction] = []
            while let bytes = try spool.next() {
                let interaction = try bytes.withUnsafeBufferPointer { buffer throws(InputError) in
                    try Interaction(jsonBytes: buffer, defaultAccount: options.defaultAccount)
                }
                chunk.append(interaction)
                if chunk.count == Self.chunkSize {
                    try interruption()
                    try rounds.write(chunk, store: self, ledger: &written)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            try interruption()
            try rounds.write(chunk, store: self, ledger: &written)
        }
        return report
    }

    /// Donations written per round of scripts.
    public static let chunkSize = 5_000

    /// Runs an import's writes (`body`, chunk by chunk, with `ImportRounds`), counting what was recorded and what
    /// was already there; when they fail part-way, or are interrupted, what they recorded is deleted again.
    private func writingRounds(
        into report: inout ImportReport, _ body: (inout ImportRounds, inout ImportLedger) throws -> Void
    ) throws {
        var rounds = ImportRounds()
        try undoingOnFailure(leftover: Self.importLeftover, undone: Self.importUndone) { written in
            do {
                try body(&rounds, &written)
                try rounds.finish(store: self, ledger: &written)
            } catch {
                rounds.abandon(store: self, ledger: &written)
                throw error
            }
        }
        report.recorded += rounds.recorded
        report.duplicates += rounds.duplicates
    }

    static let importUndone = "the import was undone: nothing of it was kept"

    static let importLeftover =
        "the donations this import had recorded stayed, import the same file again to complete it"
}
