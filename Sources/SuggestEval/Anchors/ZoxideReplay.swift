import SuggestCore

/// `zoxide` (0.4.3): outgoing count × 4 when the last outgoing donation is under an hour old, × 2 under a day,
/// × 0.5 under a week, × 0.25 otherwise (0 without outgoing donations).
///
/// The factor depends only on which of four age classes a conversation's last outgoing donation falls in, so the
/// conversations are kept per class: a list in order of their last outgoing donation (the classes are
/// consecutive stretches of that order, and a query moves the oldest of a class into the next as time passes),
/// a count of each class's conversations by outgoing count, and, for ties, one bucket per class and count in the
/// contract's tie order. A rank is then four counts and a walk into at most four buckets.
final class ZoxideReplay: AccountReplay {
    /// The age classes, youngest first, with their factors and upper bounds (seconds, exclusive).
    static let factors: [Double] = [4, 2, 0.5, 0.25]
    static let bounds: [Double] = [3_600, 86_400, 604_800]

    private var conversations = AnchorConversations()
    /// Per class, its conversations with an outgoing donation in order of the last one, latest first (those
    /// without one belong to the last class, and to no list).
    private var classLinks = SlotLinks()
    private var classes = [SlotList](repeating: SlotList(), count: 4)
    private var classOf: [Int] = []
    /// Per class, how many conversations have each outgoing count.
    private var counts = [ValueCounts](repeating: ValueCounts(), count: 4)
    /// Per class and outgoing count, the conversations in the contract's tie order.
    private var bucketLinks = SlotLinks()
    private var buckets: [[SlotList]] = [[], [], [], []]
    /// The moment the classes hold for: the latest query's.
    private var now = -Double.infinity
    let depth: Int

    init(depth: Int) { self.depth = depth }

    /// The class of a conversation whose last outgoing donation is `age` seconds old.
    @inline(__always)
    static func ageClass(_ age: Double) -> Int {
        if age < bounds[0] { return 0 }
        if age < bounds[1] { return 1 }
        if age < bounds[2] { return 2 }
        return 3
    }

    /// - Complexity: O(log n) per class to count the conversations that score more, then at most `depth` steps
    ///   into the buckets of equal score; moving conversations between classes as time passes costs O(log n) each,
    ///   at most three times per outgoing donation over the replay when dates are in order.
    func rank(of conversation: String, at date: Timestamp) throws -> RankedTarget? {
        guard let target = conversations.existingSlot(for: conversation) else { return nil }
        move(to: date.seconds)
        let count = conversations.outgoingCount[Int(target)]
        let score = Double(count) * Self.factors[classOf[Int(target)]]
        var before = 0
        for ageClass in 0..<4 {
            // count × factor > score ⟺ count > score / factor: exact, the factors being powers of two.
            let bound = score / Self.factors[ageClass]
            before += counts[ageClass].above(Int(bound.rounded(.down)))
        }
        for ageClass in 0..<4 where before < depth {
            let tied = score / Self.factors[ageClass]
            guard tied == tied.rounded(.down), tied < Double(buckets[ageClass].count) else { continue }
            var slot = buckets[ageClass][Int(tied)].head
            while slot >= 0, before < depth, conversations.recencyPrecedes(slot, target) {
                before += 1
                slot = bucketLinks.next[Int(slot)]
            }
        }
        return RankedTarget(
            rank: min(before, depth) + 1, covered: score > 0,
            lastDate: Timestamp(seconds: conversations.lastDate[Int(target)]))
    }

    /// - Complexity: O(log n) for the counts, and O(1) in the lists when dates are in order.
    func apply(_ donation: ReplayDonation) {
        let (slot, isNew) = conversations.slot(for: donation.conversation)
        let index = Int(slot)
        let oldCount = conversations.outgoingCount[index]
        let oldLastOutgoing = conversations.lastOutgoing[index]
        var ageClass = 3
        if isNew {
            classLinks.addSlot()
            bucketLinks.addSlot()
            classOf.append(3)
        } else {
            ageClass = classOf[index]
            counts[ageClass].add(oldCount, -1)
            bucketLinks.remove(slot, from: &buckets[ageClass][oldCount])
        }
        conversations.apply(donation.event, to: slot)
        let count = conversations.outgoingCount[index]
        let lastOutgoing = conversations.lastOutgoing
        // Only conversations with an outgoing donation are in a class's list: the others score 0 in any class.
        if count != oldCount || lastOutgoing[index] != oldLastOutgoing {
            if oldCount > 0 { classLinks.remove(slot, from: &classes[ageClass]) }
            ageClass = Self.ageClass(now - lastOutgoing[index])
            classLinks.insert(slot, into: &classes[ageClass]) { lastOutgoing[Int($0)] >= lastOutgoing[index] }
        }
        place(slot, class: ageClass)
    }

    /// Counts a conversation, already in the list of `ageClass` if it has an outgoing donation, in that class's
    /// counts and bucket.
    private func place(_ slot: Int32, class ageClass: Int) {
        classOf[Int(slot)] = ageClass
        let count = conversations.outgoingCount[Int(slot)]
        counts[ageClass].add(count, 1)
        while buckets[ageClass].count <= count { buckets[ageClass].append(SlotList()) }
        let conversations = self.conversations
        bucketLinks.insert(slot, into: &buckets[ageClass][count]) { conversations.recencyPrecedes($0, slot) }
    }

    /// Moves conversations between classes so that each is in the class of its age at `t`: the oldest of a
    /// class go down as time passes, the youngest of the next come back up if a query goes back in time.
    private func move(to t: Double) {
        guard t != now else { return }
        now = t
        let lastOutgoing = conversations.lastOutgoing
        for ageClass in 0..<3 {
            while case let slot = classes[ageClass].tail, slot >= 0,
                t - lastOutgoing[Int(slot)] >= Self.bounds[ageClass]
            {
                shift(slot, from: ageClass, to: ageClass + 1, toFront: true)
            }
        }
        for ageClass in (0..<3).reversed() {
            while case let slot = classes[ageClass + 1].head, slot >= 0,
                t - lastOutgoing[Int(slot)] < Self.bounds[ageClass]
            {
                shift(slot, from: ageClass + 1, to: ageClass, toFront: false)
            }
        }
    }

    /// Moves the last conversation of one class to the front of the next, or the first of one to the back of the
    /// one before: the order by last outgoing donation is kept across classes.
    private func shift(_ slot: Int32, from source: Int, to destination: Int, toFront: Bool) {
        let count = conversations.outgoingCount[Int(slot)]
        classLinks.remove(slot, from: &classes[source])
        counts[source].add(count, -1)
        bucketLinks.remove(slot, from: &buckets[source][count])
        if toFront {
            classLinks.pushFront(slot, into: &classes[destination])
        } else {
            classLinks.pushBack(slot, into: &classes[destination])
        }
        place(slot, class: destination)
    }
}
