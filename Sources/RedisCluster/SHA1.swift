/// SHA-1 (FIPS 180-4), only to name scripts the way `SCRIPT LOAD` does; never used for security.
enum SHA1 {
    /// The digest of `message` as 40 lowercase hexadecimal digits.
    static func hexDigest(of message: [UInt8]) -> String {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
        )
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }

        var words = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let offset = blockStart + index * 4
                words[index] =
                    UInt32(padded[offset]) << 24 | UInt32(padded[offset + 1]) << 16 | UInt32(padded[offset + 2]) << 8
                    | UInt32(padded[offset + 3])
            }
            for index in 16..<80 {
                let mixed = words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16]
                words[index] = mixed << 1 | mixed >> 31
            }
            var (a, b, c, d, e) = state
            for index in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch index {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temporary = (a << 5 | a >> 27) &+ f &+ e &+ k &+ words[index]
                e = d
                d = c
                c = b << 30 | b >> 2
                b = a
                a = temporary
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
        }

        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(40)
        for word in [state.0, state.1, state.2, state.3, state.4] {
            for shift in stride(from: 28, through: 0, by: -4) { text.append(digits[Int(word >> UInt32(shift) & 0xF)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
