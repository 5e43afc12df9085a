import SuggestCore

extension LineBatch {
    /// The donations of the batch, blank lines skipped.
    /// - Throws: `InputError` for the first line that is not a valid donation, with its line number.
    func donations() throws(InputError) -> [ReplayDonation] {
        var interactions: [ReplayDonation] = []
        interactions.reserveCapacity(bytes.count / 200)
        try forEachLine { bytes, line throws(InputError) in
            if let interaction = try Evaluator.interaction(jsonLine: bytes, line: line) {
                interactions.append(ReplayDonation(interaction))
            }
        }
        return interactions
    }
}
