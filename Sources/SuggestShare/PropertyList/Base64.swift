/// Base64 (RFC 4648, standard alphabet) for `<data>` elements, without Foundation.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Decodes `text`, skipping white space as property lists allow.
    /// - Returns: the bytes, or the offset in `text` of the first character that is not valid there.
    /// - Complexity: O(n).
    static func decode(_ text: [UInt8]) -> Result<[UInt8], DecodingFailure> {
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        var significant = 0
        for (offset, byte) in text.enumerated() {
            let sextet: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): sextet = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): sextet = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sextet = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): sextet = 62
            case UInt8(ascii: "/"): sextet = 63
            case UInt8(ascii: "="):
                padding += 1
                guard padding <= 2 else { return .failure(DecodingFailure(offset: offset)) }
                continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return .failure(DecodingFailure(offset: offset))
            }
            // No data after padding.
            guard padding == 0 else { return .failure(DecodingFailure(offset: offset)) }
            significant += 1
            accumulator = (accumulator << 6) | sextet
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // A single sextet left over cannot encode a byte.
        guard significant % 4 != 1 else { return .failure(DecodingFailure(offset: text.count)) }
        return .success(output)
    }

    /// Where decoding stopped: the offset of the offending character in the text.
    struct DecodingFailure: Error {
        var offset: Int
    }

    /// Encodes `bytes` with padding, on one line.
    /// - Complexity: O(n).
    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let first = UInt32(bytes[index])
            let second = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let third = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let group = first << 16 | second << 8 | third
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            output.append(index + 1 < bytes.count ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            output.append(index + 2 < bytes.count ? alphabet[Int(group & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
