import SuggestCore

/// A run of whole lines read ahead, so that another core can parse them while the replay goes on.
struct LineBatch: Sendable {
    /// The bytes of the lines, each ending in `\n` except perhaps the last line of the input.
    var bytes: [UInt8]
    /// The 1-based number of the first line.
    var firstLine: Int

    /// The donations of the batch, blank lines skipped.
    /// - Throws: `InputError` for the first line that is not a valid donation, with its line number.
    func donations() throws(InputError) -> [ReplayDonation] {
        var interactions: [ReplayDonation] = []
        interactions.reserveCapacity(bytes.count / 200)
        let result: Result<Void, InputError> = bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            var line = firstLine
            while start < buffer.count {
                var end = start
                while end < buffer.count, buffer[end] != 0x0A { end += 1 }
                var stop = end
                if stop > start, buffer[stop - 1] == 0x0D { stop -= 1 }
                do {
                    if let interaction = try Evaluator.interaction(
                        jsonLine: UnsafeBufferPointer(rebasing: buffer[start..<stop]), line: line)
                    {
                        interactions.append(ReplayDonation(interaction))
                    }
                } catch let error as InputError {
                    return .failure(error)
                } catch {
                    return .failure(InputError(field: nil, message: "\(error)", line: line))
                }
                start = end + 1
                line += 1
            }
            return .success(())
        }
        try result.get()
        return interactions
    }
}
