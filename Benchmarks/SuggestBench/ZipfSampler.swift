/// Draws ranks 0..<n with probability proportional to `1 / (rank + 1)^s` in O(1) per draw (Vose's alias method).
///
/// Rank 0 is the most popular; `s = 1` is the classic Zipf law of who people talk to most.
struct ZipfSampler {
    private let probability: [Double]
    private let alias: [Int32]

    /// - Complexity: O(n) to build; 12 bytes per rank.
    init(count n: Int, exponent s: Double) {
        precondition(n > 0 && n <= Int(Int32.max), "1 to 2^31 ranks")
        var weights = (0..<n).map { 1 / Double($0 + 1).pow(s) }
        let total = weights.reduce(0, +)
        for index in weights.indices { weights[index] *= Double(n) / total }
        var probability = [Double](repeating: 1, count: n)
        var alias = [Int32](repeating: 0, count: n)
        var small: [Int32] = []
        var large: [Int32] = []
        for index in 0..<n { if weights[index] < 1 { small.append(Int32(index)) } else { large.append(Int32(index)) } }
        while let less = small.popLast(), let more = large.last {
            probability[Int(less)] = weights[Int(less)]
            alias[Int(less)] = more
            weights[Int(more)] -= 1 - weights[Int(less)]
            if weights[Int(more)] < 1 {
                large.removeLast()
                small.append(more)
            }
        }
        // What is left holds probability 1 up to rounding.
        for index in small + large { probability[Int(index)] = 1 }
        self.probability = probability
        self.alias = alias
    }

    @inline(__always)
    func sample(_ random: inout SeededGenerator) -> Int {
        let bits = random.next()
        let column = Int(truncatingIfNeeded: bits.multipliedFullWidth(by: UInt64(probability.count)).high)
        let coin = Double(bits & 0xFFFF_FFFF) * 0x1p-32
        return coin < probability[column] ? column : Int(alias[column])
    }
}

extension Double {
    /// `self^exponent` for positive `self`, via `exp` and `log` from the C library.
    fileprivate func pow(_ exponent: Double) -> Double { exponent == 1 ? self : exp(exponent * log(self)) }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
