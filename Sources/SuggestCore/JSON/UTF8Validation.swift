/// Finds the first byte that breaks UTF-8, so that a parser can report where a file stops being text.
///
/// Hand-written rather than `String(validating:as:)`, which is generic over the encoding and looked up its type
/// metadata at run time on every call: about a tenth of the JSON parser's time.
public enum UTF8Validation {
    /// The offset of the first byte of the first invalid sequence in `bytes`, or `nil` when all of it is valid
    /// UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
    /// - Complexity: O(n).
    public static func firstInvalidOffset(in bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { firstInvalidOffset(in: $0) }
    }

    /// The offset of the first byte of the first invalid sequence, or `nil` when all of it is valid UTF-8.
    /// - Complexity: O(n).
    public static func firstInvalidOffset(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                upper = 0x9F
            case 0xF0:
                length = 4
                lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                upper = 0x8F
            default: return index
            }
            guard index + length <= count else { return index }
            let second = bytes[index + 1]
            guard second >= lower, second <= upper else { return index }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return index }
            index += length
        }
        return nil
    }
}
