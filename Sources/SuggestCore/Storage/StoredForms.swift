/// The forms a donation takes in a store, written by one definition for every store: the embedded store and the
/// Redis store must give the same `export` bytes, so what they keep of a donation is made in one place.

extension InteractionDirection {
    /// The direction as one number (0 unspecified, 1 outgoing, 2 incoming), as the stores keep it. Stored data
    /// depends on these values: they never change.
    public var storedCode: UInt8 {
        switch self {
        case .unspecified: return 0
        case .outgoing: return 1
        case .incoming: return 2
        }
    }

    /// The direction a stored number (`storedCode`) stands for; an unknown number is `unspecified`.
    public init(storedCode: UInt8) {
        switch storedCode {
        case 1: self = .outgoing
        case 2: self = .incoming
        default: self = .unspecified
        }
    }
}

extension SendMessageIntent {
    /// The intent without its content types, in JSON: the snapshot a store keeps of a conversation's intent (the
    /// content types are kept with each donation, so that one snapshot serves donations of every type).
    public var snapshotBody: [UInt8] {
        var metadata = self
        metadata.contentTypes = []
        var writer = JSONWriter()
        metadata.write(to: &writer)
        return writer.bytes
    }
}

extension Interaction {
    /// A random identifier in UUID form (8-4-4-4-12 upper-case hexadecimal digits), for a donation that comes
    /// without one.
    public static func generatedIdentifier(using random: inout some RandomNumberGenerator) -> String {
        let digits = Array(hexadecimal(random.next())) + Array(hexadecimal(random.next()))
        return String(digits[0..<8]) + "-" + String(digits[8..<12]) + "-" + String(digits[12..<16]) + "-"
            + String(digits[16..<20]) + "-" + String(digits[20..<32])
    }

    /// Sixteen upper-case hexadecimal digits, zeros first.
    private static func hexadecimal(_ value: UInt64) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
