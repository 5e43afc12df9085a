import CSystem
import Dispatch
import Suggest
import SuggestTestSupport
import Synchronization
import Testing

/// The async face of a store: many tasks at once, two services on one directory (an app and its share extension),
/// and cancellation that leaves nothing half-done.
@Suite struct SuggestionServiceTests {
    static let now = Timestamp.now()

    static func donation(_ index: Int, conversation: String) -> Interaction {
        Interaction(
            identifier: "d-\(index)", date: now.adding(-Double(index)), direction: .outgoing,
            intent: SendMessageIntent(conversationIdentifier: conversation))
    }

    /// The README's example, as written there (with a temporary directory for the App Group container).
    @Test func theReadmeExampleRuns() async throws {
        let directory = try TemporaryDirectory("readme")
        let appGroup = directory.path
        let service = try SuggestionService(directory: appGroup + "/suggest")
        try await service.donate(
            Interaction(
                date: .now(), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "thread-42", speakableGroupName: "Climbing crew")))
        let row = try await service.suggestions(context: RankingContext(at: .now(), contentTypes: ["public.jpeg"]))
        var printed: [String] = []
        for suggestion in row { printed.append("\(suggestion.title) \(suggestion.score)") }
        #expect(printed == ["Climbing crew 1.0"])
    }

    /// docs/library.md, step by step: an app donates what is sent and received, its share extension (a second
    /// service on the same directory, with Signal's activation rule) shows the row for a photo, sends to the picked
    /// conversation, and a deletion removes it from the row.
    /// A call cancelled while it waits behind another (a dismissed share sheet's query behind an import) throws
    /// `CancellationError` at once: it waited for the call before it to end, then found its flag set.
    @Test func aCallCancelledBeforeItsTurnReturnsAtOnce() async throws {
        let directory = try TemporaryDirectory("cancel-queued")
        let service = try await SuggestionService.open(directory: directory.path + "/suggest")
        try await service.donate(
            Interaction(date: .now(), direction: .outgoing, intent: SendMessageIntent(conversationIdentifier: "c")))
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let exporting = Task {
            try await service.export { _ in
                started.signal()
                // Far longer than the bound below: a full run on 2 busy cores once stalled the suite's threads 18 s.
                _ = release.wait(timeout: .now() + 120)
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        let asked = monotonicSeconds()
        let queued = Task { try await service.suggestions(context: RankingContext(at: .now())) }
        queued.cancel()
        let result = await queued.result
        #expect(monotonicSeconds() - asked < 60, "it waited for the export before it")
        #expect(throws: CancellationError.self) { try result.get() }
        release.signal()
        #expect(try await exporting.value == 1)
        // The service goes on.
        #expect(try await service.donationCount() == 1)
    }

    @Test func theLibraryGuideRuns() async throws {
        let directory = try TemporaryDirectory("guide")
        let appGroup = directory.path
        let service = try await SuggestionService.open(directory: appGroup + "/suggest", label: "app")
        let sentAt = Timestamp.now().seconds - 60
        let members = [Person(customIdentifier: "u-ana", displayName: "Ana"), Person(customIdentifier: "u-bo", displayName: "Bo")]
        for (index, isFromMe) in [false, true].enumerated() {
            let outcome = try await service.donate(
                Interaction(
                    identifier: "m-\(index)", date: Timestamp(seconds: sentAt + Double(index)),
                    direction: isFromMe ? .outgoing : .incoming,
                    intent: SendMessageIntent(
                        conversationIdentifier: "thread-42", speakableGroupName: "Climbing crew", serviceName: "Messages",
                        sender: isFromMe ? nil : members[0], recipients: members,
                        contentTypes: isFromMe ? ["public.jpeg"] : [])))
            #expect(outcome == .recorded(identifier: "m-\(index)"))
        }
        _ = try await service.donate(
            Interaction(
                identifier: "m-2", date: Timestamp(seconds: sentAt + 2), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "dm-bo", recipients: [members[1]])))
        #expect(try await service.donate(Interaction(
            identifier: "m-2", date: Timestamp(seconds: sentAt + 2), direction: .outgoing,
            intent: SendMessageIntent(conversationIdentifier: "dm-bo"))) == .duplicate(identifier: "m-2"))

        let row = try await service.suggestions(context: RankingContext(at: .now(), contentTypes: ["public.jpeg"]))
        #expect(row.map(\.title) == ["Climbing crew", "Bo"])

        // The share extension: its own service, its own rule.
        let shareExtension = try SuggestionService(directory: appGroup + "/suggest", label: "extension")
        let target = try ShareTarget.load(infoPlistAt: Suggest.packageRoot + "/SampleData/extensions/signal.plist")
        let request = ShareRequest(items: [
            ExtensionItem(attachments: [Attachment(typeIdentifiers: ["public.jpeg"], value: .file(path: "photo.jpg"))])
        ])
        let shown = try await shareExtension.share(request, target: target, context: RankingContext(at: .now()))
        #expect(shown.activated && shown.suggestions.first?.conversationIdentifier == "thread-42")
        let sent = try await shareExtension.share(
            request, target: target, choice: .conversation("dm-bo"), action: .send, context: RankingContext(at: .now()),
            identifier: "m-3")
        #expect(sent.failure == nil && sent.preselected?.conversationIdentifier == "dm-bo")
        let retried = try await shareExtension.share(
            request, target: target, choice: .conversation("dm-bo"), action: .send, context: RankingContext(at: .now()),
            identifier: "m-3")
        #expect(retried.outcome == .sent(identifier: "m-3"))
        #expect(!sent.wasRecordedBefore && retried.wasRecordedBefore)
        guard case .sent = sent.outcome else {
            Issue.record("the share was not sent: \(sent)")
            return
        }
        #expect(try await service.donationCount() == 4)

        _ = try await service.delete(.conversation("dm-bo"))
        let after = try await shareExtension.share(
            request, target: target, choice: .conversation("dm-bo"), action: .send, context: RankingContext(at: .now()))
        #expect(after.preselected == nil && after.failure != nil && after.reason != nil)
        #expect(after.suggestions.map(\.conversationIdentifier) == ["thread-42"])
        while try await !service.maintain(budget: .step).isComplete {}
    }

    /// The library's errors speak of directories and stores, never of a command line's flags.
    /// A donation built in code is held to the rules its JSON would be: one with an empty conversation identifier
    /// was stored, and every later read of the account failed ("a stored snapshot ... is damaged"); one dated at
    /// infinity killed the app (found by a probe of the library).
    @Test func aDonationBuiltInCodeIsHeldToTheFormatsRules() async throws {
        let directory = try TemporaryDirectory("validated")
        let service = try SuggestionService(directory: directory.path)
        try await service.donate(Self.donation(1, conversation: "thread-42"))
        let broken: [(Interaction, String)] = [
            (Interaction(date: Self.now, direction: .incoming, intent: SendMessageIntent(conversationIdentifier: "")),
             "intent.conversationIdentifier"),
            (Interaction(date: Self.now, direction: .incoming, intent: SendMessageIntent(conversationIdentifier: "a\u{0}b")),
             "intent.conversationIdentifier"),
            (Interaction(
                date: Self.now, direction: .incoming,
                intent: SendMessageIntent(conversationIdentifier: "c", speakableGroupName: String(repeating: "g", count: 5_000))),
             "intent.speakableGroupName"),
            (Interaction(date: Timestamp(seconds: .infinity), direction: .outgoing, intent: SendMessageIntent(conversationIdentifier: "c")),
             "date"),
            (Interaction(date: Timestamp(seconds: .nan), direction: .outgoing, intent: SendMessageIntent(conversationIdentifier: "c")),
             "date"),
        ]
        for (donation, field) in broken {
            let refused = await #expect(throws: InputError.self) { try await service.donate(donation) }
            #expect(refused?.field == field, "\(String(describing: refused))")
        }
        // Nothing of them was stored, and the account reads as before.
        #expect(try await service.donationCount() == 1)
        #expect(try await service.suggestions(context: RankingContext(at: .now())).map(\.conversationIdentifier) == ["thread-42"])
        // A batch holds each to the same rules, as lines of a file: skipped with `skipInvalid`, else refused whole.
        let batch = [Self.donation(2, conversation: "u-2"), broken[0].0, Self.donation(3, conversation: "u-3")]
        await #expect(throws: InputError.self) { try await service.importDonations(batch) }
        let report = try await service.importDonations(batch, options: ImportOptions(skipInvalid: true))
        #expect(report.recorded == 2 && report.rejected.count == 1, "\(report)")
        // A moment that is no number is refused as a query's too.
        #expect(throws: InputError.self) { try RankingContext(at: Timestamp(seconds: .nan)).validate() }
    }

    /// What a probe of the library as an app found: an import's own moment let a donation dated a year ahead in (it
    /// ranked first, and the store's export could be imported nowhere else); a block, "suggest less" or deletion of
    /// an empty or NUL-holding name was kept, where a donation refuses such a name; NaN moments passed as no cutoff,
    /// an available conversation or nothing deleted; a budget of no conversation never completed; a date out of
    /// range was called "not a date".
    @Test func theLibraryHoldsEveryCallToTheFormatsRules() async throws {
        let directory = try TemporaryDirectory("rules")
        let service = try SuggestionService(directory: directory.path)
        let later = Self.now.adding(365 * 86_400)
        let future = [
            Interaction(
                identifier: "future", date: later, direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "future"))
        ]
        for moment in [later, Timestamp(seconds: .nan)] {
            let refused = await #expect(throws: InputError.self) {
                try await service.importDonations(future, options: ImportOptions(now: moment))
            }
            #expect(refused?.field == "now", "\(String(describing: refused))")
            await #expect(throws: InputError.self) {
                try await service.importJSONLines(Array(future[0].jsonLine.utf8), options: ImportOptions(now: moment))
            }
        }
        // An earlier moment is a history replayed as of then.
        let replayed = try await service.importDonations(
            [Self.donation(1, conversation: "u-1")], options: ImportOptions(now: Self.now.adding(60)))
        #expect(replayed.recorded == 1)
        #expect(try await service.donationCount() == 1)
        for name in ["", "a\u{0}b", String(repeating: "c", count: 5_000)] {
            await #expect(throws: InputError.self) { try await service.setBlocked(true, conversation: name) }
            await #expect(throws: InputError.self) { try await service.suggestLess(conversation: name) }
            await #expect(throws: InputError.self) { try await service.resetFeedback(conversation: name) }
            await #expect(throws: InputError.self) { try await service.delete(.conversation(name)) }
            await #expect(throws: InputError.self) { try await service.delete(.identifier(name)) }
            await #expect(throws: InputError.self) { try await service.delete(.groupIdentifier(name)) }
            await #expect(throws: InputError.self) { try await service.conversationStatus(conversationIdentifier: name) }
        }
        #expect(try await service.blockedConversations().isEmpty)
        await #expect(throws: InputError.self) { try await service.delete(.before(Timestamp(seconds: .nan))) }
        #expect(throws: InputError.self) {
            try RankingContext(at: Self.now, notIdleSince: Timestamp(seconds: .nan)).validate()
        }
        await #expect(throws: InputError.self) {
            try await service.conversationStatus(conversationIdentifier: "u-1", at: Timestamp(seconds: .nan))
        }
        #expect(try await service.maintain(budget: MaintenanceBudget(conversations: 0)).isComplete)
        #expect(MaintenanceBudget(conversations: -5).conversations == 1)
        let ancient = Interaction(
            date: Timestamp(seconds: -1e300), direction: .outgoing, intent: SendMessageIntent(conversationIdentifier: "c"))
        let refused = await #expect(throws: InputError.self) { try await service.donate(ancient) }
        #expect(refused?.message.contains("outside the years 0001 to 9999") == true, "\(String(describing: refused))")
    }

    /// Every operation that names an account holds it to a donation account's rules, as the command line does:
    /// blocks and "suggest less" were saved under an empty account, or one with a NUL, that no listing showed.
    @Test func everyCallThatNamesAnAccountChecksIt() async throws {
        let directory = try TemporaryDirectory("accounts")
        let service = try SuggestionService(directory: directory.path)
        let context = RankingContext(at: Self.now)
        for name in ["", "a\u{0}b", String(repeating: "c", count: 5_000)] {
            await #expect(throws: InputError.self) { try await service.setBlocked(true, conversation: "c", account: name) }
            await #expect(throws: InputError.self) { try await service.suggestLess(conversation: "c", account: name) }
            await #expect(throws: InputError.self) { try await service.resetFeedback(conversation: "c", account: name) }
            await #expect(throws: InputError.self) { try await service.blockedConversations(account: name) }
            await #expect(throws: InputError.self) { try await service.suggestions(account: name, context: context) }
            await #expect(throws: InputError.self) {
                try await service.conversationStatus(account: name, conversationIdentifier: "c")
            }
            await #expect(throws: InputError.self) {
                try await service.share(ShareRequest(), account: name, context: context)
            }
            // An import's accounts too: an empty required one refused each donation "differs from , the one …".
            let donation = Interaction(date: Self.now, intent: SendMessageIntent(conversationIdentifier: "c"))
            for options in [ImportOptions(defaultAccount: name), ImportOptions(requiredAccount: name)] {
                await #expect(throws: InputError.self) {
                    try await service.importDonations([donation], options: options)
                }
                await #expect(throws: InputError.self) { try await service.importJSONLines([], options: options) }
            }
            await #expect(throws: InputError.self) { try await service.export(account: name) { _ in } }
            await #expect(throws: InputError.self) { try await service.donationCount(account: name) }
            await #expect(throws: InputError.self) { try await service.delete(.all, account: name) }
            await #expect(throws: InputError.self) { try await service.maintain(account: name) }
        }
        #expect(try await service.accounts().isEmpty)
        #expect(throws: InputError.self) { _ = try SuggestionService(directory: "") }
        // Cut at the NUL by the system, the path made another directory, and the error spoke of a file.
        let parent = try TemporaryDirectory("nul")
        #expect(throws: InputError.self) { _ = try SuggestionService(directory: parent.path + "/cut\u{0}ignored") }
        var info = stat()
        #expect(stat(parent.path + "/cut", &info) != 0)
        // A missing parent is `noSuchStore`, as one removed while the directory is made: it was `failed`.
        #expect { _ = try SuggestionService(directory: parent.path + "/missing/store") } throws: { error in
            (error as? StoreError)?.kind == .noSuchStore
        }
    }

    /// JSON Lines from an editor on Windows start with a byte-order mark, which `suggest import` drops: the
    /// library refused the same bytes as invalid JSON.
    @Test func importedJSONLinesMayStartWithAByteOrderMark() async throws {
        let directory = try TemporaryDirectory("mark")
        let service = try SuggestionService(directory: directory.path)
        let line = Self.donation(1, conversation: "u-1").jsonLine
        let report = try await service.importJSONLines([0xEF, 0xBB, 0xBF] + Array((line + "\n").utf8))
        #expect(report.recorded == 1)
    }

    /// A wrong hint of an import's size is a hint: `Int.max` overflowed the table of identifiers, and a trillion
    /// asked for more memory than the machine has; both ended the app.
    @Test func anImportsSizeHintCannotEndTheApp() async throws {
        let directory = try TemporaryDirectory("hint")
        let service = try SuggestionService(directory: directory.path)
        for (number, hint) in [Int.max, 1_000_000_000_000, -5].enumerated() {
            let options = ImportOptions(now: Self.now.adding(60), expectedDonations: hint)
            #expect(options.expectedDonations.map { (0...ImportOptions.largestExpectedDonations).contains($0) } == true)
            let report = try await service.importDonations(
                [Self.donation(number, conversation: "u-\(number)")], options: options)
            #expect(report.recorded == 1)
        }
    }

    /// What the share sheet shows of a conversation: the user's own entry among the recipients is nobody the
    /// message goes to ("Me, Ana" read as a group with Ana, with the user's avatar), and an empty picture or name is
    /// none (an empty image hid the recipient's; an empty display name gave an empty title).
    @Test func aSuggestionShowsNeitherTheUserNorEmptyFields() async throws {
        let directory = try TemporaryDirectory("shown")
        let service = try SuggestionService(directory: directory.path)
        let me = Person(customIdentifier: "me", displayName: "Me", image: "avatars/me.png", isMe: true)
        let ana = Person(customIdentifier: "ana", displayName: "Ana", image: "avatars/ana.png")
        let bo = Person(customIdentifier: "bo", displayName: "  ", image: "")
        let donations = [
            SendMessageIntent(conversationIdentifier: "dm-ana", recipients: [me, ana]),
            SendMessageIntent(conversationIdentifier: "dm-bo", recipients: [bo], image: ""),
            SendMessageIntent(conversationIdentifier: "notes", recipients: [me]),
        ]
        for (offset, intent) in donations.enumerated() {
            try await service.donate(
                Interaction(date: Self.now.adding(-Double(offset)), direction: .outgoing, intent: intent))
        }
        let shown = try await service.suggestions(context: RankingContext(at: .now()))
        let byName = Dictionary(uniqueKeysWithValues: shown.map { ($0.conversationIdentifier, $0) })
        #expect(byName["dm-ana"]?.title == "Ana")
        #expect(byName["dm-ana"]?.image == "avatars/ana.png")
        #expect(byName["dm-bo"]?.title == "bo")
        #expect(byName["dm-bo"]?.image == nil)
        #expect(byName["notes"]?.title == "Me")
    }

    @Test func anErrorOfTheLibraryNamesNoFlag() throws {
        let directory = try TemporaryDirectory("service")
        let file = directory.path + "/a-file"
        try writeFile(file, "not a store\n")
        let error = #expect(throws: StoreError.self) { _ = try SuggestionService(directory: file) }
        #expect(error?.kind == .notADirectory && error?.message == "\(file) is a file, not a directory")
    }

    @Test func manyTasksShareOneService() async throws {
        let directory = try TemporaryDirectory("service")
        let service = try SuggestionService(directory: directory.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        _ = try await service.donate(Self.donation(task * 100 + index, conversation: "c\(task)"))
                        _ = try await service.suggestions(context: RankingContext(at: .now()))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await service.donationCount() == 200)
        let row = try await service.suggestions(context: RankingContext(at: .now()))
        #expect(Set(row.map(\.conversationIdentifier)) == Set((0..<8).map { "c\($0)" }))
    }

    @Test func anAppAndItsShareExtensionSeeEachOthersDonations() async throws {
        let directory = try TemporaryDirectory("service")
        let app = try SuggestionService(directory: directory.path, label: "app")
        let shareExtension = try SuggestionService(directory: directory.path, label: "extension")
        _ = try await app.donate(Self.donation(1, conversation: "thread-42"))
        let status = try await shareExtension.conversationStatus(conversationIdentifier: "thread-42")
        guard case .available(let suggestion) = status else {
            Issue.record("the extension does not see the app's donation: \(status)")
            return
        }
        #expect(suggestion.conversationIdentifier == "thread-42")
        let result = try await shareExtension.share(
            try ShareRequest(attachmentArguments: ["public.jpeg=photo.jpg"]), choice: .conversation("thread-42"),
            action: .send, context: RankingContext(at: .now()))
        guard case .sent = result.outcome else {
            Issue.record("the share was not sent: \(result)")
            return
        }
        #expect(try await app.donationCount() == 2)
    }

    /// A share extension gets a conversation idle past the store's limit as `.idle`, not `.available`: `list` does
    /// not show it, so nothing preselects it either.
    @Test func anIdleConversationIsNotAvailable() async throws {
        let directory = try TemporaryDirectory("service")
        let service = try SuggestionService(directory: directory.path)
        _ = try await service.donate(
            Interaction(
                identifier: "old", date: Self.now.adding(-40 * 86_400), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "quiet")))
        _ = try await service.donate(Self.donation(1, conversation: "lively"))
        guard case .idle(let quiet) = try await service.conversationStatus(conversationIdentifier: "quiet") else {
            Issue.record("a conversation idle for 40 days (the limit is 30) is not reported idle")
            return
        }
        #expect(quiet.conversationIdentifier == "quiet")
        guard case .available = try await service.conversationStatus(conversationIdentifier: "lively") else {
            Issue.record("a conversation with a donation a second ago is not available")
            return
        }
        let shared = try await service.share(
            try ShareRequest(attachmentArguments: ["public.jpeg=photo.jpg"]), choice: .conversation("quiet"),
            action: .send, context: RankingContext(at: .now()))
        #expect(shared.preselected == nil)
        #expect(shared.failure != nil)
        #expect(try await service.donationCount() == 2)
        // A context with a wider idle cutoff of its own lists the conversation, and so preselects it.
        let wider = RankingContext(at: .now(), notIdleSince: Self.now.adding(-60 * 86_400))
        let listed = try await service.suggestions(context: wider)
        #expect(listed.contains { $0.conversationIdentifier == "quiet" })
        let preview = try await service.share(
            try ShareRequest(attachmentArguments: ["public.jpeg=photo.jpg"]), choice: .conversation("quiet"),
            context: wider)
        #expect(preview.preselected?.conversationIdentifier == "quiet")
    }

    @Test func aCancelledImportRecordsNothing() async throws {
        let directory = try TemporaryDirectory("service")
        let service = try SuggestionService(directory: directory.path)
        // Seconds of work in a debug build: the cancellation always comes while the batch is being written.
        let donations = (0..<400_000).map { Self.donation($0, conversation: "c\($0 % 1000)") }
        let task = Task { try await service.importDonations(donations) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let outcome = await task.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(try await service.donationCount() == 0)
        // The service goes on serving.
        _ = try await service.donate(Self.donation(1, conversation: "after"))
        #expect(try await service.donationCount() == 1)
    }

    @Test func aCancelledExportStops() async throws {
        let directory = try TemporaryDirectory("service")
        let service = try SuggestionService(directory: directory.path)
        _ = try await service.importDonations((0..<5_000).map { Self.donation($0, conversation: "c\($0 % 50)") })
        let seen = Counter()
        // The reader stops at the 500th donation until the task has been cancelled: however the machine schedules
        // the test, the cancellation comes part-way.
        let cancelled = DispatchSemaphore(value: 0)
        let task = Task {
            try await service.export { _ in
                seen.increment()
                if seen.value == 500 { cancelled.wait() }
            }
        }
        while seen.value < 500 { try await Task.sleep(for: .milliseconds(1)) }
        task.cancel()
        cancelled.signal()
        let outcome = await task.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(seen.value < 5_000)
    }
}

/// A counter shared with a closure that runs on another thread.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
