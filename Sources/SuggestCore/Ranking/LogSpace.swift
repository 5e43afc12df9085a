#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Arithmetic on numbers kept as their natural logarithms.
///
/// Scores are sums of exponentials of dates (`Σ w·e^(λ·t)`); over decades those overflow a `Double` unless they
/// are kept as logarithms. In log space an add is `logAddExp`, a product is a plain sum, and comparisons are
/// unchanged because `ln` is increasing.
public enum LogSpace {
    /// The logarithm of zero: an empty sum.
    public static let zero = -Double.infinity

    /// `ln(e^a + e^b)` without overflow or underflow.
    @inline(__always)
    public static func addExp(_ a: Double, _ b: Double) -> Double {
        if a == -.infinity { return b }
        if b == -.infinity { return a }
        return a >= b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b))
    }

    /// `ln(Σ e^x)` over the values.
    public static func sumExp(_ values: some Sequence<Double>) -> Double {
        var total = zero
        for value in values { total = addExp(total, value) }
        return total
    }

    /// `e^x`, clamped to the largest finite `Double` so that JSON output stays a number.
    public static func value(_ logarithm: Double) -> Double {
        min(exp(logarithm), .greatestFiniteMagnitude)
    }

    @inline(__always)
    public static func ln(_ x: Double) -> Double { log(x) }
}
