/// The lines of a JSON Lines input, one donation per non-blank line: what a store's batch import reads, from a
/// file (the command line's `ByteSource`), a request body (`MemoryJSONLines`) or anything else that hands out lines.
public protocol JSONLineSource: AnyObject {
    /// Calls `body` with the next line's bytes (without its line break), or returns `false` at the end.
    /// - Throws: when reading fails; what the error is belongs to the source.
    func nextLine(_ body: (UnsafeBufferPointer<UInt8>) -> Void) throws -> Bool
    /// The number of the line `nextLine` handed out last (1-based, blank lines counted).
    var lineNumber: Int { get }
    /// Bytes read so far, for progress.
    var bytesRead: Int { get }
    /// The size of the whole input, when known.
    var totalBytes: Int? { get }
    /// Whether the line handed out last was longer than `maximumLineLength` (and was not kept).
    var lineWasTooLong: Bool { get }
    /// The longest line kept whole.
    var maximumLineLength: Int { get }
}

extension JSONLineSource {
    /// The next donation line, decoded: its number and the donation, or why it is not one; `nil` at the end. Blank
    /// lines are skipped.
    /// - Parameter defaultAccount: the account of a donation that names none.
    /// - Throws: `InputError` for a line longer than `maximumLineLength`: not a line an import could skip, since
    ///   reading it to its end could take forever (`/dev/zero`); and what `nextLine` throws.
    public func nextDonation(defaultAccount: String) throws -> NumberedDonation? {
        try nextDonation(parse: Interaction.lineReader(defaultAccount: defaultAccount))
    }

    /// The next donation line as `parse` reads it, as `nextDonation(defaultAccount:)`.
    public func nextDonation(
        parse: (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError>
    ) throws -> NumberedDonation? {
        var result: Result<Interaction, InputError>?
        var overlong = false
        while result == nil {
            let more = try nextLine { bytes in
                if lineWasTooLong {
                    overlong = true
                } else if !LineStream.isBlank(bytes) {
                    result = parse(bytes)
                }
            }
            if overlong { throw Self.tooLong(maximumLineLength).at(line: lineNumber) }
            guard more else { return nil }
        }
        return result.map { NumberedDonation(line: lineNumber, donation: $0) }
    }

    /// The error for a line over the limit.
    public static func tooLong(_ limit: Int) -> InputError {
        InputError(
            field: nil,
            message: "the line is longer than \(ByteCount(limit)) (a donation is a few KB); nothing was imported")
    }
}

extension Interaction {
    /// How `JSONLineSource.nextDonation(defaultAccount:)` reads a line: the donation, or why it is not one.
    public static func lineReader(
        defaultAccount: String
    ) -> (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError> {
        { bytes in
            Result { () throws(InputError) in try Interaction(jsonBytes: bytes, defaultAccount: defaultAccount) }
        }
    }
}

/// One donation line of a JSON Lines input, decoded (`JSONLineSource.nextDonation(defaultAccount:)`).
public struct NumberedDonation: Sendable, Equatable {
    /// The 1-based number of the line, blank lines counted.
    public var line: Int
    /// The donation, or why the line is not one (the error does not carry `line` yet; `InputError.at(line:)` adds
    /// it).
    public var donation: Result<Interaction, InputError>

    /// The donation read from line `line`.
    public init(line: Int, donation: Result<Interaction, InputError>) {
        self.line = line
        self.donation = donation
    }
}

/// JSON Lines held in memory, such as a request's body. A UTF-8 byte-order mark at the start is dropped, as
/// `suggest import` drops it from a file.
public final class MemoryJSONLines: JSONLineSource {
    private let lines: LineStream
    public let maximumLineLength: Int

    /// - Parameter maximumLineLength: the longest line kept whole (64 MiB, as `suggest import`); taken as at least
    ///   1 (`LineStream.init(bytes:maximumLineLength:carriageReturns:skipsByteOrderMark:)`).
    public init(bytes: [UInt8], maximumLineLength: Int = 64 << 20) {
        lines = LineStream(
            bytes: bytes, maximumLineLength: maximumLineLength, carriageReturns: .dropBeforeNewline,
            skipsByteOrderMark: true)
        self.maximumLineLength = lines.maximumLineLength ?? maximumLineLength
        totalBytes = bytes.count
    }

    public let totalBytes: Int?
    public var lineNumber: Int { lines.lineNumber }
    public var bytesRead: Int { lines.bytesRead }
    public var lineWasTooLong: Bool { lines.lineWasTooLong }

    public func nextLine(_ body: (UnsafeBufferPointer<UInt8>) -> Void) throws -> Bool {
        guard let line = try lines.nextLine() else { return false }
        body(line)
        return true
    }
}
