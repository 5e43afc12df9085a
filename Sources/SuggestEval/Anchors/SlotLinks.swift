/// One doubly linked list of conversation slots: its first and last slot, `-1` when empty.
struct SlotList {
    var head: Int32 = -1
    var tail: Int32 = -1

    var isEmpty: Bool { head < 0 }
}

/// The links of many `SlotList`s over the same slots: a slot is in at most one of them at a time, so one pair of
/// arrays serves them all (the buckets of a structure, each a list).
///
/// Lists are kept in an order the caller defines; `insert` walks from the head to the first slot that does not
/// come before the new one. Replay applies donations in date order, so a changed slot almost always goes to the
/// head and the walk stops at once; out-of-order dates walk further, and are rare.
struct SlotLinks {
    private(set) var next: [Int32] = []
    private(set) var previous: [Int32] = []

    /// Makes room for one more slot (the next one), linked to nothing.
    mutating func addSlot() {
        next.append(-1)
        previous.append(-1)
    }

    /// Takes `slot` out of `list`.
    /// - Complexity: O(1).
    mutating func remove(_ slot: Int32, from list: inout SlotList) {
        let before = previous[Int(slot)]
        let after = next[Int(slot)]
        if before >= 0 { next[Int(before)] = after } else { list.head = after }
        if after >= 0 { previous[Int(after)] = before } else { list.tail = before }
        next[Int(slot)] = -1
        previous[Int(slot)] = -1
    }

    /// Puts `slot` (in no list) into `list` just before the first slot `x` for which `comesBefore(x)` is false.
    /// - Complexity: O(p) for the p slots that come before it.
    mutating func insert(_ slot: Int32, into list: inout SlotList, comesBefore: (Int32) -> Bool) {
        var before: Int32 = -1
        var after = list.head
        while after >= 0, comesBefore(after) {
            before = after
            after = next[Int(after)]
        }
        link(slot, between: before, and: after, in: &list)
    }

    /// Moves `slot`, which is in `list`, towards the head past every slot just before it for which
    /// `comesAfter(x)` is true: for a slot whose key rose but that can only pass a few neighbours.
    /// - Complexity: O(p) for the p slots it passes.
    mutating func moveTowardsHead(_ slot: Int32, in list: inout SlotList, past comesAfter: (Int32) -> Bool) {
        var after = slot
        var before = previous[Int(slot)]
        while before >= 0, comesAfter(before) {
            after = before
            before = previous[Int(before)]
        }
        guard after != slot else { return }
        remove(slot, from: &list)
        link(slot, between: before, and: after, in: &list)
    }

    /// Puts `slot` at the front of `list`.
    mutating func pushFront(_ slot: Int32, into list: inout SlotList) {
        link(slot, between: -1, and: list.head, in: &list)
    }

    /// Puts `slot` at the back of `list`.
    mutating func pushBack(_ slot: Int32, into list: inout SlotList) {
        link(slot, between: list.tail, and: -1, in: &list)
    }

    private mutating func link(_ slot: Int32, between before: Int32, and after: Int32, in list: inout SlotList) {
        previous[Int(slot)] = before
        next[Int(slot)] = after
        if before >= 0 { next[Int(before)] = slot } else { list.head = slot }
        if after >= 0 { previous[Int(after)] = slot } else { list.tail = slot }
    }
}

/// Counts by a small whole number (an outgoing count, a Sharesheet sum in tenths): how many entries have a value
/// up to some bound, in O(log n) (a Fenwick tree, which grows as larger values arrive).
struct ValueCounts {
    /// `tree[i]` sums the counts of the values in `(i - lowbit(i)) ..< i`; `tree[0]` is unused.
    private var tree: [Int] = [0]
    private var counts: [Int] = []
    /// How many entries there are.
    private(set) var total = 0

    /// Adds `delta` entries of `value` (at least 0).
    /// - Complexity: O(log v) for the largest value v; amortized O(1) more when the tree grows.
    mutating func add(_ value: Int, _ delta: Int) {
        if value >= counts.count { grow(to: value + 1) }
        counts[value] += delta
        total += delta
        var index = value + 1
        while index < tree.count {
            tree[index] += delta
            index += index & -index
        }
    }

    /// How many entries have a value of at most `value`.
    func atMost(_ value: Int) -> Int {
        guard value >= 0, !counts.isEmpty else { return 0 }
        var index = min(value, counts.count - 1) + 1
        var sum = 0
        while index > 0 {
            sum += tree[index]
            index -= index & -index
        }
        return sum
    }

    /// How many entries have a value above `value`.
    func above(_ value: Int) -> Int { total - atMost(value) }

    private mutating func grow(to size: Int) {
        var capacity = max(counts.count, 16)
        while capacity < size { capacity *= 2 }
        counts += Array(repeating: 0, count: capacity - counts.count)
        // Rebuilt from the counts in O(n): each node adds itself to its parent.
        tree = [0] + counts
        for index in 1..<tree.count {
            let parent = index + (index & -index)
            if parent < tree.count { tree[parent] += tree[index] }
        }
    }
}
