/// The AOSP Sharesheet score (`SharesheetModelScorer.computeScore`) without its MIME term, as the `android`
/// anchor reads it.
///
/// For the conversations of one account at query time `t`, with "shares" = outgoing donations:
/// - recency: the 6 conversations with the latest share get 0.40, 0.35, 0.33, 0.31, 0.29, 0.27 (latest first;
///   equal share dates in the contract's tie order); every other conversation 0.
/// - frequency: each share of a conversation weighs 1.0 when `t - date <= 1 d`, 0.9 when `<= 3 d`, 0.8 when
///   `<= 7 d`, 0.7 when `<= 14 d`, otherwise 0.6; the sum is divided by the mean of the sums over the
///   conversations with at least one share, and the ratio maps to 0.2 (`>= 2.5`), 0.15 (`>= 1.5`), 0.1 (`>= 1`),
///   0.05 (`>= 0.75`) or 0.
/// - total: `probOR(recency, frequency) = 1 - (1 - recency)(1 - frequency)`; the MIME term is 0 here (a donation
///   log says nothing of what was shared before), and `probOR(x, 0) = x`.
///
/// Sums are kept in integer tenths (10, 9, 8, 7, 6) and the ratio is compared by cross-multiplying, so a share
/// exactly at the mean gets 0.1 for sure; Android computes in `float`, where such a boundary can fall either way.
/// Android counts active time slots of its event index (several shares in one slot count once); a donation log
/// has exact dates, so each share counts, as reference/anchors.md states the formula.
enum SharesheetScore {
    /// The recency scores of the latest share targets, latest first.
    static let recencyScores: [Double] = [0.40, 0.35, 0.33, 0.31, 0.29, 0.27]

    static let day = 86_400.0
    /// The ages (`<=`) at which a share's weight steps down, and the weights in tenths.
    static let ageSteps: [Double] = [1 * day, 3 * day, 7 * day, 14 * day]

    /// The normalized frequency of a conversation whose sum is `tenths`, when `count` conversations with shares
    /// sum to `total`: `tenths / (total / count)` mapped onto 0.2, 0.15, 0.1, 0.05, 0.
    static func normalizedFrequency(tenths: Int, total: Int, count: Int) -> Double {
        guard total > 0, tenths > 0 else { return 0 }
        let scaled = tenths * count  // ratio = scaled / total
        if 2 * scaled >= 5 * total { return 0.2 }
        if 2 * scaled >= 3 * total { return 0.15 }
        if scaled >= total { return 0.1 }
        if 4 * scaled >= 3 * total { return 0.05 }
        return 0
    }

    /// Probabilistic OR: `1 - (1 - a)(1 - b)`.
    @inline(__always)
    static func probOR(_ a: Double, _ b: Double) -> Double { 1 - (1 - a) * (1 - b) }
}
