import SuggestCore
import SuggestTestSupport
import Testing

/// The share flow through the built binary: activation, preselection, send and cancel.
@Suite struct ShareFlowTests {
    let directory: TemporaryDirectory
    var store: String { directory.path + "/store" }
    let at = "2026-11-30T09:00:00Z"
    let extensions = Suggest.packageRoot + "/SampleData/extensions/"

    init() throws {
        directory = try TemporaryDirectory("cli-test")
        _ = SuggestProcess.run(["config", "--max-age-days", "0", "--idle-days", "0", "--store", directory.path + "/store"])
        _ = SuggestProcess.run(["import", Suggest.packageRoot + "/SampleData/donations.jsonl", "--store", directory.path + "/store"])
    }

    func share(_ arguments: [String], input: String = "") throws -> (status: Int32, json: JSONValue, stderr: String) {
        let result = SuggestProcess.run(
            ["share", "--store", store, "--at", at, "--json-output"] + arguments, input: input)
        return (result.status, try JSONParser.parse(result.standardOutput), result.standardError)
    }

    func exportLines() -> [String] {
        SuggestProcess.run(["export", "--store", store]).standardOutput.split(separator: "\n").map(String.init)
    }

    /// `share --explain` prints the account's learned weights under its table, as its help says and `list` does.
    @Test func shareExplainsTheLearnedWeightsAsListDoes() {
        let shared = SuggestProcess.run(
            ["share", "--store", store, "--at", at, "--attachment", "public.jpeg=x.jpg", "--explain"])
        let listed = SuggestProcess.run(["list", "--store", store, "--at", at, "--content-type", "public.jpeg", "--explain"])
        #expect(shared.status == 0 && shared.standardOutput.contains("learned from "), "\(shared.standardOutput)")
        let block = { (text: String) in text.split(separator: "\n").drop { !$0.hasPrefix("learned from ") } }
        #expect(Array(block(shared.standardOutput)) == Array(block(listed.standardOutput)))
    }

    @Test func aTelegramStyleRuleActivatesForAURLAndNotForNothing() throws {
        let url = try share(["--extension", extensions + "telegram.plist", "--attachment", "public.url=https://example.com"])
        #expect(url.json["activated"] == .bool(true))
        guard case .array(let suggestions)? = url.json["suggestions"] else { throw ShareTestError.shape }
        #expect(suggestions.count == 8)
        let nothing = try share(["--extension", extensions + "telegram.plist"])
        #expect(nothing.json["activated"] == .bool(false))
        #expect(nothing.json["suggestions"] == .array([]))
        guard case .string(let reason)? = nothing.json["reason"] else { throw ShareTestError.shape }
        #expect(reason.contains("got no extension items"))
    }

    /// A share of files of more kinds than a query takes (32) is still a share: ranked by the first kinds it names,
    /// where it was refused as a query over its limits.
    @Test func aShareOfManyKindsOfFilesIsRankedByTheFirstOnes() throws {
        let attachments = (0..<40).flatMap { ["--attachment", "com.example.kind\($0)=file\($0)"] }
        let many = try share(attachments)
        #expect(many.status == 0, "\(many.stderr)")
        #expect(many.json["activated"] == .bool(true))
        guard case .array(let suggestions)? = many.json["suggestions"] else { throw ShareTestError.shape }
        #expect(suggestions.count == 8)
        // Sent, it records the first 100 distinct kinds, as many as a donation carries: it failed, naming
        // `intent.contentTypes`, a field nobody wrote.
        let kinds = (0..<150).flatMap { ["--attachment", "com.example.kind\($0)=file\($0)"] }
        let sent = try share(kinds + ["--conversation", "u-juan", "--send"])
        #expect(sent.status == 0 && sent.json["outcome"] == .string("sent"), "\(sent.stderr)")
        let line = try #require(exportLines().last)
        #expect(line.contains("com.example.kind99") && !line.contains("com.example.kind100"), "\(line.prefix(200))")
    }

    /// A send to a conversation last donated with nearly 1 MiB of people: the donation it would record, with the
    /// shared types, is over a donation's size. Said as the send's failure (exit 1), where it was reported as the
    /// caller's invalid input (exit 64) with advice about group names the caller cannot follow (found by a probe).
    @Test func aSendOverADonationsSizeIsAFailureOfTheSend() throws {
        var people = (0..<260).map { Person(customIdentifier: "p\($0)", displayName: String(repeating: "n", count: 4_000)) }
        var donation = Interaction(
            identifier: "big-1", date: Timestamp(rfc3339: at)!.adding(-60), direction: .outgoing,
            intent: SendMessageIntent(conversationIdentifier: "crowd", recipients: people))
        people[0].displayName = String(repeating: "n", count: 4_000 - (donation.jsonLine.utf8.count - Interaction.maximumDonationBytes) - 10)
        donation.intent.recipients = people
        let stored = SuggestProcess.run(["donate", "--json", "--store", store], input: donation.jsonLine)
        #expect(stored.status == 0, "\(stored.standardError)")
        let sent = SuggestProcess.run(
            ["share", "--store", store, "--at", at, "--conversation", "crowd", "--send", "--attachment", "public.jpeg=a.jpg"])
        #expect(sent.status == 1, "\(sent)")
        #expect(sent.standardError.contains("the donation it would record") && !sent.standardError.contains("speakableGroupName"), "\(sent.standardError)")
    }

    /// A share request is at most 256 KiB of JSON: its parsed tree takes about 26 times its size (a 30 MB one took
    /// 790 MB). One just under it is read; one over it is refused before it is parsed.
    @Test func aShareRequestOverItsLimitIsRefusedBeforeItIsParsed() throws {
        func request(textBytes: Int) -> String {
            #"{"items":[{"contentText":""# + String(repeating: "x", count: textBytes) + #""}]}"#
        }
        let fits = SuggestProcess.run(["share", "--store", store, "--at", at, "--json"], input: request(textBytes: 200_000))
        #expect(fits.status == 0, "\(fits.standardError)")
        let over = SuggestProcess.run(["share", "--store", store, "--at", at, "--json"], input: request(textBytes: 300_000))
        #expect(over.status == 64)
        #expect(over.standardError.contains("longer than 262144 bytes"), "\(over.standardError)")
    }

    /// Standard input cannot feed both the Info.plist and the request: each reader blamed the other's bytes.
    @Test func standardInputFeedsOneReaderOnly() throws {
        let both = SuggestProcess.run(
            ["share", "--store", store, "--at", at, "--json", "--extension", "/dev/stdin"], input: #"{"items":[]}"#)
        #expect(both.status == 64)
        #expect(both.standardError.contains("both read standard input"), "\(both.standardError)")
    }

    @Test func aPDFOnlyRuleRejectsAnImage() throws {
        let result = try share(["--extension", extensions + "apple-pdf-example.plist", "--attachment", "public.jpeg=photo.jpg"])
        #expect(result.status == 0)
        #expect(result.json["activated"] == .bool(false))
        guard case .string(let reason)? = result.json["reason"] else { throw ShareTestError.shape }
        #expect(reason.contains("com.adobe.pdf") && reason.contains("public.jpeg"))
        let pdf = try share(["--extension", extensions + "apple-pdf-example.plist", "--attachment", "com.adobe.pdf=a.pdf"])
        #expect(pdf.json["activated"] == .bool(true))
    }

    @Test func aLiveConversationIsPreselectedExactlyAndADeletedOneFallsBackToTheList() throws {
        let live = try share(["--extension", extensions + "signal.plist", "--attachment", "public.jpeg=p.jpg", "--conversation", "u-mom"])
        #expect(live.json["preselected"]?["conversationIdentifier"] == .string("u-mom"))
        #expect(live.json["reason"] == .null)
        #expect(live.json["outcome"] == .string("preview"))
        _ = SuggestProcess.run(["delete", "--conversation", "u-mom", "--store", store])
        let deleted = try share(["--extension", extensions + "signal.plist", "--attachment", "public.jpeg=p.jpg", "--conversation", "u-mom"])
        #expect(deleted.json["preselected"] == .null)
        guard case .string(let reason)? = deleted.json["reason"], case .array(let list)? = deleted.json["suggestions"] else {
            throw ShareTestError.shape
        }
        #expect(reason.contains("deleted"))
        #expect(!list.isEmpty && !list.contains { $0["conversationIdentifier"] == .string("u-mom") })
        _ = SuggestProcess.run(["block", "--conversation", "u-juan", "--store", store])
        let blocked = try share(["--attachment", "public.jpeg=p.jpg", "--conversation", "u-juan", "--send"])
        #expect(blocked.status == 1)
        #expect(blocked.json["preselected"] == .null && blocked.json["outcome"] == .string("preview"))
        #expect(blocked.stderr.contains("blocked"))
    }

    /// An empty `--conversation` is refused as the server refuses an empty `conversationIdentifier`, where it was
    /// looked up as an unknown conversation (found by a probe).
    @Test func anEmptyConversationIsRefused() throws {
        let before = exportLines()
        let empty = SuggestProcess.run(
            ["share", "--store", store, "--at", at, "--attachment", "public.jpeg=p.jpg", "--conversation", "", "--send"])
        #expect(empty.status == 64 && empty.standardError.contains("--conversation must not be empty"), "\(empty)")
        #expect(exportLines() == before)
    }

    @Test func sendAddsOneOutgoingEngagedDonationAndCancelAddsNone() throws {
        let before = exportLines()
        let cancelled = try share(["--attachment", "public.url=https://example.com", "--pick", "1", "--cancel"])
        #expect(cancelled.json["outcome"] == .string("cancelled"))
        #expect(exportLines() == before)
        let sent = try share(["--attachment", "public.url=https://example.com", "--conversation", "g-family", "--send"])
        #expect(sent.status == 0)
        #expect(sent.json["outcome"] == .string("sent"))
        let after = exportLines()
        #expect(after.count == before.count + 1)
        let donation = try Interaction(json: try JSONParser.parse(after.last ?? ""))
        #expect(donation.conversationIdentifier == "g-family")
        #expect(donation.direction == .outgoing)
        #expect(donation.isEngagedSuggestion)
        #expect(donation.intent.contentTypes == ["public.url"])
        #expect(donation.intent.speakableGroupName == "Family")
    }

    /// A send that may be retried (its answer lost) names its donation: the retry records nothing more and says
    /// `sent` with the same identifier, from the flag or from the request read as JSON.
    @Test func aSendUnderAnIdentifierRecordsOnce() throws {
        let before = exportLines()
        let flags = ["--attachment", "public.url=https://example.com", "--conversation", "g-family", "--send"]
        for _ in 0..<2 {
            let sent = try share(flags + ["--identifier", "share-42"])
            #expect(sent.status == 0 && sent.json["donation"] == .string("share-42"), "\(sent)")
        }
        let request = #"{"items": [{"attachments": [{"type": "public.url", "value": "https://a"}]}], "#
            + #""conversationIdentifier": "g-family", "action": "send", "identifier": "share-42"}"#
        let fromJSON = SuggestProcess.run(["share", "--json", "--store", store, "--at", at], input: request)
        #expect(fromJSON.status == 0 && fromJSON.standardOutput.hasSuffix(#""donation":"share-42"}"# + "\n"))
        #expect(exportLines().count == before.count + 1)
        // Said so in words, and refused for another conversation (it is not a retry of this send).
        let text = SuggestProcess.run(["share", "--store", store, "--at", at] + flags + ["--identifier", "share-42"])
        #expect(text.status == 0 && text.standardOutput.contains("Sent before: donation share-42 was recorded then"))
        let elsewhere = SuggestProcess.run(
            ["share", "--store", store, "--at", at, "--attachment", "public.url=https://example.com", "--conversation",
             "u-juan", "--send", "--identifier", "share-42"])
        #expect(elsewhere.status == 64 && elsewhere.standardError.contains("another conversation"), "\(elsewhere)")
        // Not called a preview: "--send completes the share" had been asked, and failed (found by a probe).
        #expect(!elsewhere.standardOutput.contains("Preview only"), "\(elsewhere.standardOutput)")
        #expect(exportLines().count == before.count + 1)
        // A pick names a rank, which the send itself moved: its retry is answered by the identifier. (`--pick 5
        // --send` sent to rank 5, and the same command again was refused: rank 5 was another conversation then.)
        let pickFlags = ["--attachment", "public.url=https://example.com", "--pick", "5", "--send", "--identifier", "pick-5"]
        let picked = try share(pickFlags)
        let pickedAgain = try share(pickFlags)
        #expect(picked.status == 0 && pickedAgain.status == 0, "\(pickedAgain)")
        #expect(pickedAgain.json["donation"] == .string("pick-5"))
        #expect(pickedAgain.json["preselected"]?["conversationIdentifier"] == picked.json["preselected"]?["conversationIdentifier"])
        #expect(exportLines().count == before.count + 2)
        // And after a block of its conversation: it was recorded, and is answered so.
        if case .string(let conversation)? = picked.json["preselected"]?["conversationIdentifier"] {
            #expect(SuggestProcess.run(["block", "--store", store, "--conversation", conversation]).status == 0)
            let afterBlock = try share(pickFlags)
            #expect(afterBlock.status == 0 && afterBlock.json["donation"] == .string("pick-5"), "\(afterBlock)")
        }
        #expect(exportLines().count == before.count + 2)
        let both = SuggestProcess.run(
            ["share", "--json", "--store", store, "--identifier", "other"], input: request)
        #expect(both.status == 64 && both.standardError.contains("identifier"), "\(both.standardError)")
    }

    @Test func aWholeRequestArrivesAsJSON() throws {
        let request = #"{"items": [{"contentText": "look", "attachments": [{"type": "public.url", "value": "https://a"}]}, {"attachments": [{"type": "public.png", "file": "b.png"}]}]}"#
        let result = SuggestProcess.run(["share", "--json", "--store", store, "--at", at, "--pick", "2"], input: request)
        #expect(result.status == 0)
        let json = try JSONParser.parse(result.standardOutput)
        #expect(json["activated"] == .bool(true))
        #expect(json["contentTypes"] == .array([.string("public.url"), .string("public.png")]))
        #expect(json["preselected"] != .null)
    }

    /// Only an extension that lists INSendMessageIntent takes part in suggestions: any other gets no list, so a
    /// `--pick` has nothing to pick (it recorded an engaged suggestion to the first of a list it never sees).
    @Test func aTargetWithoutTheMessageIntentGetsNoSuggestionsToPick() throws {
        let before = exportLines()
        for choice in [["--pick", "1"], ["--conversation", "u-mom"]] {
            let result = try share(
                ["--extension", extensions + "wordpress.plist", "--attachment", "public.url=https://example.com", "--send"]
                    + choice)
            #expect(result.status == 1)
            #expect(result.json["activated"] == .bool(true))
            #expect(result.json["suggestions"] == .array([]))
            #expect(result.json["preselected"] == .null)
            #expect(result.stderr.contains("INSendMessageIntent"), "\(result.stderr)")
        }
        #expect(exportLines() == before)
    }

    /// "May be suggested" for a preselection means what `list` would show here: not a conversation idle past the
    /// store's limit, nor one of another service than the one asked for.
    @Test func anIdleConversationOrOneOfAnotherServiceIsNotPreselected() throws {
        let other = directory.path + "/idle-store"
        _ = SuggestProcess.run(["config", "--max-age-days", "0", "--store", other])
        for (conversation, date) in [("quiet", "2026-10-01T00:00:00Z"), ("lively", "2026-11-29T00:00:00Z")] {
            let donated = SuggestProcess.run(
                ["donate", "--conversation", conversation, "--service", "chat.example", "--date", date, "--store", other])
            #expect(donated.status == 0, "\(donated.standardError)")
        }
        func preselect(_ arguments: [String]) throws -> JSONValue {
            try JSONParser.parse(
                SuggestProcess.run(["share", "--store", other, "--at", at, "--json-output"] + arguments).standardOutput)
        }
        let quiet = try preselect(["--conversation", "quiet"])
        #expect(quiet["preselected"] == .null)
        guard case .string(let reason)? = quiet["reason"] else { throw ShareTestError.shape }
        #expect(reason.contains("idle limit"), "\(reason)")
        let elsewhere = try preselect(["--conversation", "lively", "--service", "sms"])
        #expect(elsewhere["preselected"] == .null)
        guard case .string(let serviceReason)? = elsewhere["reason"] else { throw ShareTestError.shape }
        #expect(serviceReason.contains("service sms"), "\(serviceReason)")
        let here = try preselect(["--conversation", "lively", "--service", "chat.example"])
        #expect(here["preselected"]?["conversationIdentifier"] == .string("lively"))
    }

    /// The server's share body works on standard input: its rule, choice and action count (they were ignored, and a
    /// body saying "send" only previewed); the same thing said by the body and by a flag is refused.
    @Test func theServersShareBodyWorksOnStandardInput() throws {
        func run(_ body: String, _ flags: [String] = []) -> (status: Int32, json: JSONValue?, stderr: String) {
            let result = SuggestProcess.run(["share", "--json", "--store", store, "--at", at] + flags, input: body)
            return (result.status, try? JSONParser.parse(result.standardOutput), result.standardError)
        }
        let items = #""items": [{"attachments": [{"type": "public.url", "value": "https://example.com"}]}]"#
        let refused = run("{\(items), \"rule\": \"FALSEPREDICATE\", \"pick\": 1, \"action\": \"send\"}")
        #expect(refused.status == 1)
        #expect(refused.json?["activated"] == .bool(false))
        let before = exportLines()
        let sent = run("{\(items), \"conversationIdentifier\": \"g-family\", \"action\": \"send\"}")
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.json?["outcome"] == .string("sent"))
        #expect(exportLines().count == before.count + 1)
        // Its ranking members too: a pick among the sms conversations only, and an exclusion kept.
        let picked = run("{\(items), \"service\": \"sms\", \"exclude\": [\"u-office\"], \"limit\": 3, \"pick\": 1}")
        #expect(picked.status == 0, "\(picked.stderr)")
        guard case .array(let listed)? = picked.json?["suggestions"] else { throw ShareTestError.shape }
        #expect(!listed.isEmpty && listed.count <= 3)
        #expect(listed.allSatisfy { $0["serviceName"] == .string("sms") && $0["conversationIdentifier"] != .string("u-office") })
        for (body, flags, complaint) in [
            ("{\(items), \"service\": \"sms\"}", ["--service", "chat.example"], "service"),
            ("{\(items), \"exclude\": [\"u-mom\"]}", ["--exclude", "u-juan"], "exclude"),
            ("{\(items), \"rule\": \"TRUEPREDICATE\"}", ["--extension", extensions + "telegram.plist"], "rule"),
            ("{\(items), \"pick\": 1}", ["--conversation", "u-mom"], "chooses"),
            ("{\(items), \"pick\": 1, \"action\": \"cancel\"}", ["--send"], "action"),
            ("{\(items), \"action\": \"send\"}", [], "chosen conversation"),
        ] {
            let conflict = run(body, flags)
            #expect(conflict.status == 64, "\(body) \(flags)")
            #expect(conflict.stderr.contains(complaint), "\(conflict.stderr)")
        }
        #expect(exportLines().count == before.count + 1)
    }

    @Test func malformedPlistsAndPredicatesExit64WithThePositionAndRecordNothing() {
        let before = exportLines()
        let badPredicate = directory.path + "/bad-predicate.plist"
        SuggestProcess.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>NSExtension</key><dict><key>NSExtensionAttributes</key><dict>
            <key>NSExtensionActivationRule</key><string>SUBQUERY(extensionItems, $e, $e.attachments.@count &gt;= ).@count == 1</string>
            </dict></dict></dict></plist>
            """, to: badPredicate)
        let predicate = SuggestProcess.run(["share", "--store", store, "--extension", badPredicate, "--attachment", "public.url=x", "--send", "--pick", "1"])
        #expect(predicate.status == 64)
        #expect(predicate.standardError.contains("does not parse at character"))
        let badPlist = directory.path + "/bad.plist"
        SuggestProcess.write("<plist><dict><key>a</key><string>x</dict></plist>", to: badPlist)
        let plist = SuggestProcess.run(["share", "--store", store, "--extension", badPlist, "--send", "--pick", "1"])
        #expect(plist.status == 64)
        #expect(plist.standardError.contains(":1:"))
        let badAttachment = SuggestProcess.run(["share", "--store", store, "--attachment", "=x"])
        #expect(badAttachment.status == 64)
        #expect(exportLines() == before)
    }
}

enum ShareTestError: Error { case shape }
