import SuggestCore

/// An import's input that may read its first donation line ahead, and then hands that line out again first: so
/// that `import` can look at it before creating a store, with nothing lost from a pipe.
///
/// Once the line is handed out again, every property is the underlying source's, which read exactly that far.
final class FirstLineAhead: JSONLineSource {
    private let source: ByteSource
    /// The line read ahead, until it is handed out again.
    private var held: [UInt8]?

    init(_ source: ByteSource) { self.source = source }

    var lineNumber: Int { source.lineNumber }
    var bytesRead: Int { source.bytesRead }
    var totalBytes: Int? { source.totalBytes }
    var lineWasTooLong: Bool { source.lineWasTooLong }
    var maximumLineLength: Int { source.maximumLineLength }

    /// Reads the first non-blank line and decodes it, as the import will; `nil` for an input without one.
    /// - Throws: what reading throws, and `InputError` for a line over `maximumLineLength` (the import stops at one).
    func readFirstDonation(defaultAccount: String) throws -> NumberedDonation? {
        precondition(held == nil && source.lineNumber == 0, "only the first line can be read ahead")
        var line: [UInt8] = []
        let read = Interaction.lineReader(defaultAccount: defaultAccount)
        let first = try source.nextDonation { bytes in
            line = Array(bytes)
            return read(bytes)
        }
        if first != nil { held = line }
        return first
    }

    func nextLine(_ body: (UnsafeBufferPointer<UInt8>) -> Void) throws -> Bool {
        guard let line = held else { return try source.nextLine(body) }
        held = nil
        line.withUnsafeBufferPointer(body)
        return true
    }
}
