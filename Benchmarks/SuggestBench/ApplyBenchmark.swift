import SuggestCore

/// `suggest-bench apply`: what one donation costs the in-memory ranking state.
///
/// The history is generated up front into flat arrays (events, slots), so the timed loop does nothing but call
/// `InMemoryRankingIndex.apply(_:to:)`. Each run starts from a new index whose slots were resolved before the
/// clock starts; the interning variant resolves the conversation identifier inside the loop; settling (folding
/// the touched slots into the sorted lists) is timed apart, after a whole history and after a few donations.
enum ApplyBenchmark {
    static let usage = """
        usage: suggest-bench apply [--donations N] [--conversations C] [--seed S] [--runs R] [HISTORY OPTIONS]

        Times InMemoryRankingIndex.apply(_:to:) over a whole synthetic history (default 10M donations over 100k
        conversations), R times (default 5), each on a new index:
          apply, slot known     the hot path, slots resolved before the clock starts
          state alone           ConversationState.apply on a plain array: the arithmetic without the index
          apply + interning     slot(for: conversationIdentifier) inside the loop, then apply
          settle, full          settle() after the whole history (every list rebuilt)
          settle after k        settle() after k more donations to random conversations (k = 1, 64, 4096)
          apply(Interaction)    the whole-donation path (content kinds, people, service), on the first 200k
        Prints medians with min and max, and a checksum of the final states.

        history options:
        \(HistoryOptions.help)
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try BenchArguments(arguments, flags: [], options: HistoryOptions.names.union(["--runs"]))
        var defaults = SyntheticHistory.Parameters()
        defaults.donations = 10_000_000
        defaults.conversations = 100_000
        let parameters = try HistoryOptions.parameters(parsed, defaults: defaults)
        let runs = try parsed.integer("--runs", default: 5, range: 1...100)
        let history = SyntheticHistory(parameters)

        Log.note("apply: generating \(HistoryOptions.describe(parameters))")
        let (events, conversations) = history.rankerEvents()
        let identifiers = (0..<Int32(parameters.conversations)).map(SyntheticHistory.conversationIdentifier)
        let count = Double(events.count)
        var checksum = Checksum()

        var hotPath: [Double] = []
        var stateOnly: [Double] = []
        var interning: [Double] = []
        var fullSettle: [Double] = []
        var incremental: [Int: [Double]] = [1: [], 64: [], 4_096: []]
        for run in 1...runs {
            // The hot path: slots known. Conversation c gets slot c, resolved before the clock starts.
            let index = InMemoryRankingIndex()
            for identifier in identifiers { _ = index.slot(for: identifier) }
            let applied = events.withUnsafeBufferPointer { events in
                conversations.withUnsafeBufferPointer { slots in
                    MonotonicClock.time {
                        for offset in 0..<events.count { index.apply(events[offset], to: slots[offset]) }
                    }
                }
            }
            hotPath.append(applied.nanoseconds / count)

            // The state arithmetic alone (ConversationState.apply on a plain array): what the index adds on top
            // is the marking of each sorted list and the class's access checks.
            var plain = [ConversationState](repeating: .empty, count: parameters.conversations)
            let policy = index.policy
            let arithmetic = events.withUnsafeBufferPointer { events in
                conversations.withUnsafeBufferPointer { slots in
                    plain.withUnsafeMutableBufferPointer { states in
                        MonotonicClock.time {
                            for offset in 0..<events.count { states[Int(slots[offset])].apply(events[offset], policy: policy) }
                        }
                    }
                }
            }
            stateOnly.append(arithmetic.nanoseconds / count)
            checksum.add(plain[0].channels[0])
            fullSettle.append(MonotonicClock.time { index.settle() }.nanoseconds)

            // A live index: a few donations arrive, then a query settles them.
            var random = SeededGenerator(seed: parameters.seed &+ UInt64(run))
            let last = events[events.count - 1].date.seconds
            for (k, _) in incremental.sorted(by: { $0.key < $1.key }) {
                var samples: [Double] = []
                for repetition in 0..<9 {
                    for step in 0..<k {
                        let event = ConversationState.Event(
                            date: Timestamp(seconds: last + Double(repetition * k + step)), direction: .outgoing)
                        index.apply(event, to: Int32(random.below(parameters.conversations)))
                    }
                    samples.append(MonotonicClock.time { index.settle() }.nanoseconds)
                }
                incremental[k, default: []].append(Summary(samples).median)
            }
            for state in index.states { checksum.add(state.channels[0] + state.channels[1]) }

            // With interning: the identifier is hashed and looked up for every donation.
            let interned = InMemoryRankingIndex()
            let withInterning = events.withUnsafeBufferPointer { events in
                conversations.withUnsafeBufferPointer { conversations in
                    MonotonicClock.time {
                        for offset in 0..<events.count {
                            let slot = interned.slot(for: identifiers[Int(conversations[offset])])
                            interned.apply(events[offset], to: slot)
                        }
                    }
                }
            }
            interning.append(withInterning.nanoseconds / count)
            checksum.add(Double(interned.count))
            Log.note(
                "apply: run \(run)/\(runs): \(Format.fixed(hotPath.last ?? 0, 1)) ns/donation, "
                    + "\(Format.fixed(interning.last ?? 0, 1)) ns with interning, settle \(Format.duration(fullSettle.last ?? 0))")
        }

        // The whole-donation path on a prefix: Interaction values are large, so only 200k are built.
        let prefix = min(200_000, parameters.donations)
        var interactions: [Interaction] = []
        interactions.reserveCapacity(prefix)
        var prefixStream = history.makeIterator()
        while interactions.count < prefix, let donation = prefixStream.next() {
            interactions.append(history.interaction(donation))
        }
        var wholePath: [Double] = []
        for _ in 1...runs {
            let index = InMemoryRankingIndex()
            let timed = MonotonicClock.time { for interaction in interactions { index.apply(interaction) } }
            wholePath.append(timed.nanoseconds / Double(prefix))
            checksum.add(Double(index.count))
        }

        print("## apply: \(HistoryOptions.describe(parameters)); \(runs) runs, median (min–max)")
        print("")
        print("| measure | per donation / per call |")
        print("|---|---|")
        print("| apply(_:to:), slot known | \(Summary(hotPath).formatted { Format.fixed($0, 1) + " ns" }) |")
        print("| ConversationState.apply alone, on a plain array | \(Summary(stateOnly).formatted { Format.fixed($0, 1) + " ns" }) |")
        print("| slot(for:) + apply(_:to:) | \(Summary(interning).formatted { Format.fixed($0, 1) + " ns" }) |")
        print("| settle() after the whole history | \(Summary(fullSettle).formatted(Format.duration)) |")
        for (k, values) in incremental.sorted(by: { $0.key < $1.key }) {
            print("| settle() after \(k) more donation\(k == 1 ? "" : "s") | \(Summary(values).formatted(Format.duration)) |")
        }
        print(
            "| apply(Interaction), first \(Format.count(prefix)) | \(Summary(wholePath).formatted { Format.fixed($0, 0) + " ns" }) |"
        )
        print("")
        print("checksum \(checksum.hex)")
        return 0
    }
}
