/// A limit in bytes as a message names it: in the largest binary unit that writes it whole (64 MiB, 512 KiB,
/// 1000 bytes).
public struct ByteCount: CustomStringConvertible, Sendable {
    public var bytes: Int

    public init(_ bytes: Int) { self.bytes = bytes }

    public var description: String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
