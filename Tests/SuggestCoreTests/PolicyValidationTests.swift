import Dispatch

#if canImport(Glibc)
    import Glibc
#endif
import SuggestTestSupport
import Testing

@testable import SuggestCore

/// A policy a caller builds is checked when it is built: a bad value is a thrown `PolicyError` naming it, never a
/// trap inside the ranker or a walk that is no longer exact.
@Suite struct PolicyValidationTests {
    static let channel = FrecencyPolicy.Channel(name: "only", halfLife: 3_600, weight: 1, incoming: 1)

    @Test func thePackagesOwnPoliciesAreValid() throws {
        #expect(FrecencyPolicy.default.problem == nil)
        let learned = LearnedPolicy.default
        #expect(
            LearnedPolicy.problem(
                base: learned.base, priorStrength: learned.priorStrength, horizon: learned.horizon,
                channelPrior: learned.channelPrior, staleAfter: learned.staleAfter) == nil)
        // The checked initializers accept what the package's constants hold.
        _ = try FrecencyPolicy(
            channels: FrecencyPolicy.default.channels, contentWeight: 3, peopleWeight: 3, lessFactor: 0.25)
        _ = try LearnedPolicy(base: learned.base, priorStrength: learned.priorStrength, horizon: learned.horizon)
    }

    @Test(arguments: [
        (FrecencyPolicy.Channel(name: "c", halfLife: 0, weight: 1, incoming: 1), "half-life"),
        (FrecencyPolicy.Channel(name: "c", halfLife: -5, weight: 1, incoming: 1), "half-life"),
        (FrecencyPolicy.Channel(name: "c", halfLife: .infinity, weight: 1, incoming: 1), "half-life"),
        // Valid numbers whose rate or product overflowed: every store write then failed on a NaN.
        (FrecencyPolicy.Channel(name: "c", halfLife: 1e-300, weight: 1, incoming: 1), "half-life"),
        (FrecencyPolicy.Channel(name: "c", halfLife: 1e300, weight: 1, incoming: 1), "half-life"),
        (FrecencyPolicy.Channel(name: "c", halfLife: 60, weight: 1e300, incoming: 1), "weight"),
        (FrecencyPolicy.Channel(name: "c", halfLife: 60, weight: 1, incoming: 1, engagedBonus: 1e31), "engagedBonus"),
        (FrecencyPolicy.Channel(name: "c", halfLife: 60, weight: -1, incoming: 1), "weight"),
        (FrecencyPolicy.Channel(name: "c", halfLife: 60, weight: 1, incoming: .nan), "incoming"),
        (FrecencyPolicy.Channel(name: "c", halfLife: 60, weight: 1, incoming: 1, group: -0.5), "group"),
    ])
    func aChannelOutOfRangeIsRefusedByName(channel: FrecencyPolicy.Channel, field: String) {
        expectError {
            _ = try FrecencyPolicy(channels: [channel])
        } where: { error in
            let message = (error as? PolicyError)?.message ?? ""
            return message.contains("channel 'c'") && message.contains(field)
        }
    }

    @Test func theCountOfChannelsAndTheContextConstantsAreChecked() {
        #expect(throws: PolicyError.self) { _ = try FrecencyPolicy(channels: []) }
        #expect(throws: PolicyError.self) {
            _ = try FrecencyPolicy(channels: Array(repeating: Self.channel, count: FrecencyPolicy.maximumChannels + 1))
        }
        // Above 1, "suggest less" would raise a score, and the walk's bound would no longer hold.
        #expect(throws: PolicyError(message: "lessFactor must be from 0 to 1 (feedback only lowers a score), not 2.0"))
        {
            _ = try FrecencyPolicy(channels: [Self.channel], lessFactor: 2)
        }
        #expect(throws: PolicyError.self) { _ = try FrecencyPolicy(channels: [Self.channel], contentWeight: -1) }
        #expect(throws: PolicyError.self) { _ = try FrecencyPolicy(channels: [Self.channel], contentHalfLife: 0) }
        #expect(throws: PolicyError.self) { _ = try FrecencyPolicy(channels: [Self.channel], peopleWeight: .nan) }
        #expect(throws: PolicyError.self) { _ = try FrecencyPolicy(channels: [Self.channel], peopleWeight: 1e300) }
        #expect(throws: PolicyError.self) { _ = try FrecencyPolicy(channels: [Self.channel], groupFactor: 1e300) }
    }

    @Test func aLearnedPolicyChecksItsLearnerAndItsLatestChannels() throws {
        let base = try FrecencyPolicy(channels: [Self.channel])
        #expect(throws: PolicyError.self) { _ = try LearnedPolicy(base: base, priorStrength: 0) }
        #expect(throws: PolicyError.self) { _ = try LearnedPolicy(base: base, horizon: 0) }
        #expect(throws: PolicyError.self) { _ = try LearnedPolicy(base: base, channelPrior: [1, 1]) }
        #expect(throws: PolicyError.self) { _ = try LearnedPolicy(base: base, channelPrior: [0]) }
        // A learned `latest` channel that ignores a direction cannot take a conversation's old key out of its mass.
        let latest = FrecencyPolicy.Channel(
            name: "latest", halfLife: 86_400, weight: 1, incoming: 0, aggregation: .latest)
        #expect(throws: PolicyError.self) { _ = try LearnedPolicy(base: FrecencyPolicy(channels: [latest])) }
    }

    @Test func optionsThatWouldDivideByZeroOrBlockAreTakenAsTheirLeast() throws {
        var options = ImportOptions(progressInterval: 0)
        #expect(options.progressInterval == 1)
        options.progressInterval = -3
        #expect(options.progressInterval == 1)
        let pipe = BatchPipe<Int>(capacity: 0)
        #expect(pipe.put(.success(7)))  // with no room at all this would wait forever
        #expect(try pipe.take()?.get() == 7)
    }

    /// Options an app keeps in a property are read later: a moment fixed when they were made refused every new
    /// donation as "after the store's clock" ten minutes on. Without a moment they read the clock, and an import
    /// fixes it once (`fixingNow`); a moment given stays.
    @Test func optionsWithoutAMomentReadTheClockAndAnImportFixesIt() {
        let kept = ImportOptions(skipInvalid: true)
        let first = kept.now
        usleep(20_000)
        #expect(kept.now.seconds > first.seconds)
        let fixed = kept.fixingNow()
        let moment = fixed.now
        usleep(20_000)
        #expect(fixed.now == moment)
        let given = Timestamp(seconds: 1_700_000_000)
        #expect(ImportOptions(now: given).now == given && ImportOptions(now: given).fixingNow().now == given)
    }

    /// A pipe whose consumer stops early goes away with its producer's room taken: libdispatch killed the process
    /// (SIGILL, "semaphore object deallocated while in use") when a semaphore went below the value it was made with,
    /// so an import with an invalid line late in it, or cancelled, crashed the CLI (exit 132) and an app (found by a
    /// probe of the library). This test crashed the test run before the fix.
    @Test func aPipeWhoseConsumerStoppedEarlyGoesAwayQuietly() {
        for _ in 0..<20 {
            let finished = DispatchSemaphore(value: 0)
            do {
                let pipe = BatchPipe<Int>(capacity: 4)
                DispatchQueue.global().async { [pipe] in
                    var next = 0
                    while pipe.put(.success(next)) { next += 1 }
                    finished.signal()
                }
                #expect((try? pipe.take()?.get()) == 0)
                pipe.cancel()
                finished.wait()  // the producer saw the cancel and let go of the pipe
            }
        }
    }
}
