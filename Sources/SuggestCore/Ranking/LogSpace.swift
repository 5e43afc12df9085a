import CSystem

/// Arithmetic on numbers kept as their natural logarithms.
///
/// Scores are sums of exponentials of dates (`Σ w·e^(λ·t)`); over decades those overflow a `Double` unless they
/// are kept as logarithms. In log space an add is `logAddExp`, a product is a plain sum, and comparisons are
/// unchanged because `ln` is increasing.
public enum LogSpace {
    /// The logarithm of zero: an empty sum.
    public static let zero = -Double.infinity

    /// `ln(e^a + e^b)` without overflow or underflow.
    ///
    /// When the two are more than 50 apart and the larger is at least 1e-3 in size, `ln(1 + e^-d)` is below half a
    /// unit in the last place of the larger one, so the sum rounds to it exactly: the result is the larger one,
    /// bit for bit, without the `exp` and `log1p` (a fast-decaying channel meets this at most donations).
    @inline(__always)
    public static func addExp(_ a: Double, _ b: Double) -> Double {
        if a == -.infinity { return b }
        if b == -.infinity { return a }
        let (larger, smaller) = a >= b ? (a, b) : (b, a)
        if larger - smaller > 50 && abs(larger) >= 1e-3 { return larger }
        return larger + log1p(exp(smaller - larger))
    }

    /// `e^x`, clamped to the largest finite `Double` so that JSON output stays a number.
    public static func value(_ logarithm: Double) -> Double {
        min(exp(logarithm), .greatestFiniteMagnitude)
    }

    /// The natural logarithm: how a weight enters log space. `ln 0` is `zero` (a weight of 0 adds nothing); a
    /// negative number gives NaN.
    @inline(__always)
    public static func ln(_ x: Double) -> Double { log(x) }
}
