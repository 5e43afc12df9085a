#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The monotonic clock in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`), the same clock `ContinuousClock` reads.
enum MonotonicClock {
    @inline(__always)
    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Runs `body` once and returns how long it took, in nanoseconds, with its result.
    @inline(__always)
    static func time<T>(_ body: () throws -> T) rethrows -> (nanoseconds: Double, result: T) {
        let start = nanoseconds()
        let result = try body()
        return (Double(nanoseconds() - start), result)
    }
}

/// The median, minimum and maximum of repeated measurements: the median is the figure to quote, the spread
/// says how noisy the machine was.
struct Summary {
    let count: Int
    let median: Double
    let minimum: Double
    let maximum: Double

    init(_ values: [Double]) {
        precondition(!values.isEmpty, "a summary needs at least one value")
        let sorted = values.sorted()
        count = sorted.count
        minimum = sorted[0]
        maximum = sorted[sorted.count - 1]
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// `median (min–max)` in the unit of `format`.
    func formatted(_ format: (Double) -> String) -> String {
        "\(format(median)) (\(format(minimum))–\(format(maximum)))"
    }
}

/// A running checksum of results: printed at the end, so the optimizer cannot drop the work that fed it.
struct Checksum {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    @inline(__always)
    mutating func add(_ bits: UInt64) { value = (value ^ bits) &* 0x0000_0100_0000_01B3 }

    @inline(__always)
    mutating func add(_ number: Double) { add(number.bitPattern) }

    mutating func add(_ text: String) { for byte in text.utf8 { add(UInt64(byte)) } }

    var hex: String { String(value, radix: 16) }
}

/// Number formatting without Foundation.
enum Format {
    /// `value` with `digits` decimals.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let fraction = Int(scaled - Double(whole) * scale)
            let digitsText = String(fraction)
            text += "." + String(repeating: "0", count: digits - digitsText.count) + digitsText
        }
        return text
    }

    /// A duration given in nanoseconds, in the unit that reads best (ns, µs, ms, s).
    static func duration(_ nanoseconds: Double) -> String {
        if nanoseconds < 1_000 { return fixed(nanoseconds, nanoseconds < 100 ? 1 : 0) + " ns" }
        if nanoseconds < 1_000_000 { return fixed(nanoseconds / 1_000, nanoseconds < 100_000 ? 2 : 1) + " µs" }
        if nanoseconds < 1_000_000_000 { return fixed(nanoseconds / 1_000_000, 2) + " ms" }
        return fixed(nanoseconds / 1_000_000_000, 2) + " s"
    }

    /// A count with thin grouping: 10000000 as 10,000,000.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { grouped += "," }
            grouped.append(character)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// Megabytes (10^6 bytes) from bytes.
    static func megabytes(_ bytes: Double) -> String { fixed(bytes / 1_000_000, 1) + " MB" }
}

/// Writes to standard error, for progress that must not mix with results.
enum Log {
    static func note(_ text: String) {
        let line = text + "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { buffer in write(2, buffer.baseAddress, buffer.count - 1) }
    }
}
