import SuggestCore
import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `suggest serve` end to end: the built binary on a free loopback port, a real store, real HTTP. Every route of
/// the contract with its results, and every kind of bad input with its error (and nothing changed).
@Suite struct ServerRoutesTests {
    static let now = "2026-12-01T10:00:00Z"

    /// A recent moment (so that retention keeps it) in RFC 3339.
    static func recent(_ secondsAgo: Int) -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var moment = time_t(time.tv_sec - secondsAgo)
        var parts = tm()
        gmtime_r(&moment, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// 40,000 donations as JSON Lines, about 8 MB: more than the sockets' buffers hold for a client that reads
    /// nothing, so that an export of them cannot be made to the end while its client does not read.
    static let exportLargerThanTheSocketsHold: String = {
        var lines = ""
        for index in 0..<40_000 {
            lines += donation("e\(index)", "c\(index % 500)", ago: 50_000 - index) + "\n"
        }
        return lines
    }()

    static func donation(_ id: String, _ conversation: String, ago: Int, direction: String = "outgoing", extra: String = "")
        -> String
    {
        #"{"identifier":"\#(id)","date":"\#(recent(ago))","direction":"\#(direction)","intent":{"conversationIdentifier":"\#(conversation)"\#(extra)}}"#
    }

    /// A method holding a DEL (or a long made-up one) showed in the access log as it came: a terminal showed
    /// `GET\x7f` as `GET`, beside the 405 it got. The log, and the error's message, show such bytes as `?`, and 32
    /// bytes at most.
    @Test func theAccessLogShowsOddMethodsAsWhatTheyAre() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        for method in ["GET\u{7F}", String(repeating: "M", count: 100)] {
            let connection = try RawHTTPConnection(port: server.port)
            try connection.send("\(method) /v1/version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            sleepSeconds(0.2)
            connection.close()
        }
        // The error's message names it the same way.
        let reply = try server.client.request(String(repeating: "M", count: 100), "/v1/version")
        #expect(reply.status == 405 && reply.text.contains(String(repeating: "M", count: 32) + "… is not allowed"), "\(reply)")
        #expect(!reply.text.contains(String(repeating: "M", count: 33)))
        _ = server.stop()
        let log = server.process.standardErrorSoFar()
        #expect(log.contains(#""method":"GET?""#), "\(log)")
        #expect(log.contains(#""method":""# + String(repeating: "M", count: 32) + "…\""), "\(log)")
        #expect(!log.contains("\u{7F}"))
    }

    @Test func donationsSuggestionsExportAndDeletion() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        let client = server.client
        // One donation, then a batch in JSON Lines.
        let one = try client.send("POST", "/v1/accounts/alice/donations", json: Self.donation("d1", "thread-42", ago: 60, extra: #","speakableGroupName":"Climbing crew","recipients":[{"customIdentifier":"u-17","displayName":"Juan"},{"customIdentifier":"u-18"}]"#))
        #expect(one.status == 201)
        #expect(one.text == #"{"recorded":1,"duplicates":0,"expired":0}"#)
        let batch = [
            Self.donation("d2", "u-17", ago: 50, direction: "incoming"), Self.donation("d3", "u-17", ago: 40),
            Self.donation("d1", "thread-42", ago: 60), "", Self.donation("d4", "u-9", ago: 3000),
        ].joined(separator: "\n")
        let many = try client.send("POST", "/v1/accounts/alice/donations", json: batch, contentType: "application/x-ndjson")
        #expect(many.status == 201)
        #expect(many.text == #"{"recorded":3,"duplicates":1,"expired":0}"#)
        // The same identifier again: a duplicate, never a second donation.
        let again = try client.send("POST", "/v1/accounts/alice/donations", json: Self.donation("d3", "u-17", ago: 40))
        #expect(again.text == #"{"recorded":0,"duplicates":1,"expired":0}"#)

        let list = try client.request("GET", "/v1/accounts/alice/suggestions?limit=2&explain=true")
        #expect(list.status == 200)
        #expect(list.header("Content-Type") == "application/json")
        #expect(list.text.hasPrefix(#"{"account":"alice","at":"#))
        // The latest exchange first, then the group written to a minute ago, before a person written to 50 minutes
        // ago.
        #expect(list.text.contains(#""rank":1,"conversationIdentifier":"u-17""#))
        #expect(list.text.contains(#""rank":2,"conversationIdentifier":"thread-42","speakableGroupName":"Climbing crew","recipients":[{"customIdentifier":"u-17","displayName":"Juan"},{"customIdentifier":"u-18"}]"#))
        #expect(list.text.contains(#""score":1,"#) && list.text.contains(#""logScore":"#))
        #expect(!list.text.contains("u-9"), "limit=2")
        let three = try client.request("GET", "/v1/accounts/alice/suggestions?limit=3")
        #expect(three.text.contains(#""rank":3,"conversationIdentifier":"u-9""#))
        // The CLI on the same store writes the same bytes for the same moment.
        let at = try #require(list.text.firstRange(of: #""at":""#).map { range in
            String(list.text[range.upperBound...].prefix(while: { $0 != "\"" }))
        })
        let listed = try Suggest.run(
            ["list", "--store", scratch("store"), "--account", "alice", "--limit", "2", "--explain", "--json", "--at", at],
            scratch: scratch.path)
        let atTheSameMoment = try client.request("GET", "/v1/accounts/alice/suggestions?limit=2&explain=1&at=\(percentEncoded(at))")
        #expect(listed.output == atTheSameMoment.text + "\n")

        // The export: JSON Lines, in recording order, in the account's own name.
        let export = try client.request("GET", "/v1/accounts/alice/donations")
        #expect(export.status == 200)
        #expect(export.header("Content-Type") == "application/x-ndjson")
        let lines = export.text.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0.hasPrefix(#"{"account":"alice","identifier":"d"#) })

        // Deletion by conversation, identifier, group, date and account, each answered with its report.
        let conversation = try client.request("DELETE", "/v1/accounts/alice/conversations/u-9")
        #expect(conversation.text == #"{"account":"alice","donations":1,"conversations":["u-9"],"removedConversations":["u-9"]}"#)
        let identifier = try client.request("DELETE", "/v1/accounts/alice/donations/d2")
        #expect(identifier.text == #"{"account":"alice","donations":1,"conversations":["u-17"],"removedConversations":[]}"#)
        let group = try client.request("DELETE", "/v1/accounts/alice/groups/none")
        #expect(group.text == #"{"account":"alice","donations":0,"conversations":[],"removedConversations":[]}"#)
        let before = try client.request("DELETE", "/v1/accounts/alice/donations?before=\(percentEncoded(Self.recent(45)))")
        #expect(before.text.contains(#""donations":1,"conversations":["thread-42"]"#))
        // The whole account takes its preferences with it, names and all, also of conversations never donated.
        #expect(try client.request("PUT", "/v1/accounts/alice/conversations/blocked-quokka/block").status == 200)
        let less = try client.send(
            "POST", "/v1/accounts/alice/conversations/lessened-quokka/feedback", json: #"{"less":true}"#)
        #expect(less.status == 200)
        let account = try client.request("DELETE", "/v1/accounts/alice")
        #expect(
            account.text
                == #"{"account":"alice","donations":1,"conversations":["u-17"],"removedConversations":["u-17"],"preferencesForgotten":true}"#)
        #expect(try client.request("GET", "/v1/accounts/alice/donations").body.isEmpty)
        for file in ["suggest.sqlite", "suggest.sqlite-wal"] {
            let bytes = (try? readFile(scratch("store") + "/" + file)) ?? []
            for name in ["blocked-quokka", "lessened-quokka"] {
                #expect(!bytes.contains(Array(name.utf8)), "\(name) is still in \(file)")
            }
        }
        #expect(server.stop().status == 0)
    }

    /// A file that `suggest import` reads is a body the server takes: a UTF-8 byte-order mark at its start (what
    /// editors on Windows write) was refused as invalid JSON. And a share request's `at` takes Unix seconds, as
    /// `--at`, `?at=` and a donation's date do: it took RFC 3339 alone.
    @Test func aByteOrderMarkAndUnixSecondsAreTakenAsTheCommandLineTakesThem() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        let client = server.client
        let mark = "\u{FEFF}"
        let one = try client.send("POST", "/v1/accounts/me/donations", json: mark + Self.donation("1", "u-a", ago: 30))
        #expect(one.text == #"{"recorded":1,"duplicates":0,"expired":0}"#)
        let batch = mark + [Self.donation("2", "u-b", ago: 20), Self.donation("3", "u-c", ago: 10)].joined(separator: "\n")
        let many = try client.send("POST", "/v1/accounts/me/donations", json: batch, contentType: "application/x-ndjson")
        #expect(many.text == #"{"recorded":2,"duplicates":0,"expired":0}"#)

        let asSeconds = try client.send("POST", "/v1/accounts/me/share", json: mark + #"{"items": [], "at": 1764928800}"#)
        #expect(asSeconds.status == 200)
        let asText = try client.send("POST", "/v1/accounts/me/share", json: #"{"items": [], "at": "2025-12-05T10:00:00Z"}"#)
        #expect(asSeconds.text == asText.text)
        let asMilliseconds = try client.send("POST", "/v1/accounts/me/share", json: #"{"items": [], "at": 1764928800000}"#)
        #expect(asMilliseconds.status == 400)
        #expect(asMilliseconds.text.hasPrefix(#"{"error":{"code":"invalid_share","message":""#))
        #expect(asMilliseconds.text.contains("as milliseconds it would be 2025-12-05T10:00:00Z"))
    }

    @Test func blockFeedbackAndTheShareFlow() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        let client = server.client
        let batch = [
            Self.donation("1", "u-juan", ago: 300, extra: #","recipients":[{"customIdentifier":"u-juan","displayName":"Juan"}],"contentTypes":["public.jpeg"]"#),
            Self.donation("2", "u-mom", ago: 200), Self.donation("3", "g-work", ago: 100),
        ].joined(separator: "\n")
        #expect(try client.send("POST", "/v1/accounts/me/donations", json: batch, contentType: "application/x-ndjson").status == 201)

        let blocked = try client.request("PUT", "/v1/accounts/me/conversations/g-work/block")
        #expect(blocked.text == #"{"conversationIdentifier":"g-work","blocked":true}"#)
        #expect(!(try client.request("GET", "/v1/accounts/me/suggestions").text.contains("g-work")))
        #expect(try client.request("DELETE", "/v1/accounts/me/conversations/g-work/block").text.contains(#""blocked":false"#))
        #expect(try client.request("GET", "/v1/accounts/me/suggestions").text.contains("g-work"))

        let less = try client.send("POST", "/v1/accounts/me/conversations/u-mom/feedback", json: #"{"less": true}"#)
        #expect(less.text == #"{"conversationIdentifier":"u-mom","suggestLess":1}"#)
        let explained = try client.request("GET", "/v1/accounts/me/suggestions?explain=true").text
        #expect(explained.contains(#""suggestLess":1"#))
        #expect(try client.send("POST", "/v1/accounts/me/conversations/u-mom/feedback", json: #"{"reset": true}"#).status == 200)
        let wrong = try client.send("POST", "/v1/accounts/me/conversations/u-mom/feedback", json: #"{"less": false}"#)
        #expect(wrong.status == 400 && wrong.text.contains("invalid_feedback"))

        // The share flow: a PDF-only rule (dictionary form) refuses a photo and says why; a predicate accepts it.
        let photo = #""items": [{"attachments": [{"type": "public.jpeg", "file": "beach.jpg"}]}]"#
        let refused = try client.send(
            "POST", "/v1/accounts/me/share",
            json: #"{\#(photo), "rule": {"NSExtensionActivationSupportsFileWithMaxCount": 1, "NSExtensionActivationSupportsImageWithMaxCount": 0}}"#)
        #expect(refused.status == 200)
        #expect(refused.text.hasPrefix(#"{"activated":false,"suggestions":[],"preselected":null,"reason":""#))
        let preview = try client.send(
            "POST", "/v1/accounts/me/share",
            json: #"{\#(photo), "rule": "SUBQUERY(extensionItems, $e, SUBQUERY($e.attachments, $a, ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.image\").@count == 1).@count == 1", "conversationIdentifier": "u-juan"}"#)
        #expect(preview.text.contains(#""activated":true"#))
        #expect(preview.text.contains(#""preselected":{"conversationIdentifier":"u-juan""#))
        #expect(preview.text.contains(#""outcome":"preview""#))
        // A conversation that received photos comes first for a photo: the pick sends to it.
        let sent = try client.send("POST", "/v1/accounts/me/share", json: #"{\#(photo), "pick": 1, "action": "send"}"#)
        #expect(sent.text.contains(#""preselected":{"conversationIdentifier":"u-juan""#))
        #expect(sent.text.contains(#""outcome":"sent""#) && sent.text.contains(#""donation":""#))
        // A send under an identifier is idempotent: its retry (an answer lost) records nothing more and answers as
        // the first did; without one, two sends were two donations and nothing could tell them apart.
        let once = #"{\#(photo), "conversationIdentifier": "u-mom", "action": "send", "identifier": "share-7"}"#
        func counted() throws -> [String] {
            try client.request("GET", "/metrics").text.split(separator: "\n").filter {
                $0.hasPrefix("suggest_donations_recorded_total ") || $0.hasPrefix("suggest_donations_duplicate_total ")
            }.map { String($0.split(separator: " ")[1]) }
        }
        let before = try counted().compactMap { Int($0) }
        let first = try client.send("POST", "/v1/accounts/me/share", json: once)
        let retried = try client.send("POST", "/v1/accounts/me/share", json: once)
        // The retry counts as a duplicate, not as a second donation recorded.
        let after = try counted().compactMap { Int($0) }
        #expect(after == [before[0] + 1, before[1] + 1], "\(before) → \(after)")
        #expect(first.status == 200 && first.text.contains(#""donation":"share-7""#), "\(first)")
        #expect(retried.status == 200 && retried.text.contains(#""outcome":"sent""#)
            && retried.text.hasSuffix(#""donation":"share-7"}"#), "\(retried)")
        // The same identifier for a send to another conversation is not a retry: refused, nothing recorded.
        let reused = try client.send(
            "POST", "/v1/accounts/me/share",
            json: #"{\#(photo), "conversationIdentifier": "u-juan", "action": "send", "identifier": "share-7"}"#)
        #expect(reused.status == 400 && reused.text.contains("another conversation"), "\(reused)")
        let emptyIdentifier = try client.send(
            "POST", "/v1/accounts/me/share", json: #"{\#(photo), "pick": 1, "action": "send", "identifier": ""}"#)
        #expect(emptyIdentifier.status == 400 && emptyIdentifier.text.contains("identifier"), "\(emptyIdentifier)")
        let cancelled = try client.send("POST", "/v1/accounts/me/share", json: #"{\#(photo), "pick": 1, "action": "cancel"}"#)
        #expect(cancelled.text.contains(#""outcome":"cancelled""#))
        // A misspelt member is named, not read as absent (it was a 200 preview that sent nothing).
        let misspelt = try client.send("POST", "/v1/accounts/me/share", json: #"{\#(photo), "pick": 1, "actoin": "send"}"#)
        #expect(misspelt.status == 400 && misspelt.text.contains("actoin: is not a member of a share request"), "\(misspelt.text)")
        let twice = try client.send("POST", "/v1/accounts/me/share", json: #"{\#(photo), "pick": 1, "action": "send", "action": "preview"}"#)
        #expect(twice.status == 400 && twice.text.contains("action: is given twice"), "\(twice.text)")
        // The deleted conversation is never preselected, nor swapped for another.
        _ = try client.request("DELETE", "/v1/accounts/me/conversations/u-juan")
        let gone = try client.send("POST", "/v1/accounts/me/share", json: #"{\#(photo), "conversationIdentifier": "u-juan"}"#)
        #expect(gone.text.contains(#""preselected":null"#) && gone.text.contains("deleted"))
        // A send that cannot send is refused, as `suggest share --send` fails it (it was 200 "preview").
        for body in [
            #"{\#(photo), "conversationIdentifier": "u-juan", "action": "send"}"#, #"{\#(photo), "pick": 99, "action": "send"}"#,
        ] {
            let refused = try client.send("POST", "/v1/accounts/me/share", json: body)
            #expect(refused.status == 400 && refused.text.contains("invalid_share") && refused.text.contains("nothing was sent"), "\(body): \(refused.text)")
        }
        // Without a choice, refused as the command line refuses it, before the rule is asked; a rule that refuses
        // the items says which part did, as the command line's result does.
        let unchosen = try client.send("POST", "/v1/accounts/me/share", json: #"{"items": [], "rule": "FALSEPREDICATE", "action": "send"}"#)
        #expect(unchosen.status == 400 && unchosen.text.contains("sending needs the chosen conversation"), "\(unchosen.text)")
        let unruled = try client.send("POST", "/v1/accounts/me/share", json: #"{"items": [], "rule": "FALSEPREDICATE", "pick": 1, "action": "send"}"#)
        #expect(unruled.status == 400 && unruled.text.contains("nothing was sent") && unruled.text.contains("FALSEPREDICATE"), "\(unruled.text)")
        // u-juan's donations went with it (the sent share among them); the cancelled share recorded nothing; the
        // share sent twice under one identifier is one donation.
        let export = try client.request("GET", "/v1/accounts/me/donations").text
        #expect(export.split(separator: "\n").count == 3)
        #expect(export.split(separator: "\n").count(where: { $0.contains(#""identifier":"share-7""#) }) == 1)
    }

    /// A share naming a conversation or an identifier no donation can have is refused as every route refuses such a
    /// name, by its limit, not looked for: a preview answered 200 "has no donation", echoing 4 KB back.
    @Test func aShareOfANameOverTheLimitIsRefused() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        let long = String(repeating: "c", count: 4_097)
        for body in [
            #"{"items": [], "conversationIdentifier": "\#(long)"}"#,
            #"{"items": [], "conversationIdentifier": "x", "action": "send", "identifier": "\#(long)"}"#,
        ] {
            let refused = try server.client.send("POST", "/v1/accounts/alice/share", json: body)
            #expect(refused.status == 400 && refused.text.hasPrefix(#"{"error":{"code":"invalid_share","#))
            #expect(
                refused.text.contains("the limit is 4096") && refused.text.count < 400, "\(refused.text.prefix(300))")
        }
        server.stop()
    }

    @Test func badInputGetsAJSONErrorAndChangesNothing() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store"), "--max-body-bytes", "4096"], scratch: scratch.path)
        let client = server.client
        func expectError(_ reply: HTTPReply, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(reply.status == status, "\(reply)", sourceLocation: sourceLocation)
            #expect(reply.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
            #expect(reply.text.hasPrefix(#"{"error":{"code":"\#(code)","message":""#), "\(reply)", sourceLocation: sourceLocation)
        }
        let path = "/v1/accounts/alice/donations"
        expectError(try client.send("POST", path, json: "{not json"), 400, "invalid_donation")
        // JSON is UTF-8: a body declared in another charset is refused, not read as UTF-8; UTF-8 said aloud is fine
        // (in an account of its own: this one must stay empty).
        let latin1 = ServerRoutesTests.donation("latin-1", "c-latin", ago: 5)
        expectError(
            try client.request(
                "POST", path, headers: [("Content-Type", "application/json; charset=latin1")], body: Array(latin1.utf8)),
            415, "unsupported_media_type")
        let declared = try client.request(
            "POST", "/v1/accounts/declared-utf8/donations", headers: [("Content-Type", #"application/json; charset="UTF-8""#)],
            body: Array(latin1.utf8))
        #expect(declared.status == 201, "\(declared)")
        expectError(try client.send("POST", path, json: #"{"date":"yesterday","intent":{"conversationIdentifier":"x"}}"#), 400, "invalid_donation")
        expectError(try client.send("POST", path, json: Self.donation("x", "y", ago: 1), contentType: "text/plain"), 415, "unsupported_media_type")
        expectError(
            try client.send("POST", path, json: #"{"account":"bob","date":"\#(Self.recent(1))","intent":{"conversationIdentifier":"x"}}"#),
            400, "invalid_donation")
        // A batch with one bad line records nothing, and says which line.
        let batch = [Self.donation("a", "c", ago: 5), Self.donation("b", "c", ago: 4), #"{"date": 1}"#].joined(separator: "\n")
        let refused = try client.send("POST", path, json: batch, contentType: "application/x-ndjson")
        expectError(refused, 400, "invalid_donation")
        #expect(refused.text.contains("line 3: "))
        // A body of blank lines holds no donation, as an empty one does not (it was 201 "recorded 0").
        for blank in ["", "\n\n", " \r\n\t\n"] {
            expectError(try client.send("POST", path, json: blank, contentType: "application/x-ndjson"), 400, "invalid_donation")
        }
        // A donation from the far future is refused; one from just ahead is recorded as of now.
        expectError(try client.send("POST", path, json: #"{"date":"2099-01-01T00:00:00Z","intent":{"conversationIdentifier":"x"}}"#), 400, "invalid_donation")
        #expect(try client.request("GET", path).body.isEmpty)
        // An oversized body: 413 before it is read.
        let big = String(repeating: " ", count: 5000) + Self.donation("big", "c", ago: 1)
        expectError(try client.send("POST", path, json: big), 413, "body_too_large")
        // Routes and methods.
        expectError(try client.request("GET", "/v1/nothing"), 404, "not_found")
        let method = try client.request("PATCH", "/v1/accounts/alice/conversations/x/block")
        expectError(method, 405, "method_not_allowed")
        #expect(method.header("Allow") == "DELETE, PUT")
        expectError(try client.request("GET", "/v1/accounts//suggestions"), 400, "invalid_account")
        expectError(try client.request("GET", "/v1/accounts/\(String(repeating: "a", count: 5000))/suggestions"), 400, "invalid_account")
        // Queries over the limits the command line enforces, and unknown parameters.
        expectError(try client.request("GET", "/v1/accounts/alice/suggestions?limit=0"), 400, "invalid_query")
        expectError(try client.request("GET", "/v1/accounts/alice/suggestions?limit=1001"), 400, "invalid_query")
        let types = (0..<33).map { "contentType=org.example.t\($0)" }.joined(separator: "&")
        expectError(try client.request("GET", "/v1/accounts/alice/suggestions?\(types)"), 400, "invalid_query")
        expectError(try client.request("GET", "/v1/accounts/alice/suggestions?contentTypes=public.jpeg"), 400, "invalid_query")
        expectError(try client.request("GET", "/v1/accounts/alice/suggestions?at=yesterday"), 400, "invalid_query")
        // A content type is checked as the command line and the share flow check one.
        expectError(try client.request("GET", "/v1/accounts/alice/suggestions?contentType=a%20b"), 400, "invalid_query")
        expectError(try client.request("GET", "/v1/accounts/alice/suggestions?contentType="), 400, "invalid_query")
        expectError(try client.request("DELETE", "/v1/accounts/alice/donations"), 400, "invalid_query")
        expectError(try client.send("POST", "/v1/accounts/alice/share", json: #"{"items": [], "rule": "TRUEPREDICATE AND"}"#), 400, "invalid_share")
        expectError(try client.send("POST", "/v1/accounts/alice/share", json: #"{"items": [], "pick": 1, "conversationIdentifier": "x"}"#), 400, "invalid_share")
        // A rule that would run for hours on these items (nested SUBQUERYs multiply) is refused at once.
        var costly = "$v4 == -1"
        for level in (1...4).reversed() { costly = "SUBQUERY($a.l, $v\(level), \(costly)).@count > 0" }
        let numbers = (0..<100).map(String.init).joined(separator: ",")
        expectError(
            try client.send(
                "POST", "/v1/accounts/alice/share",
                json: #"{"items": [{"userInfo": {"l": [\#(numbers)]}}], "rule": "SUBQUERY(extensionItems, $a, \#(costly)).@count > 0"}"#),
            400, "invalid_share")
        // A share request over 256 KiB is refused before it is parsed (its tree takes about 26 times its size).
        expectError(
            try client.send(
                "POST", "/v1/accounts/alice/share",
                json: #"{"items": [{"contentText": ""# + String(repeating: "x", count: 300_000) + #""}]}"#),
            413, "body_too_large")
        expectError(
            try client.send(
                "POST", "/v1/accounts/alice/conversations/c/feedback",
                json: #"{"less": true, "pad": ""# + String(repeating: "x", count: 5000) + #""}"#),
            413, "body_too_large")
        // A compressed body is refused as a media type the server does not read (it was parsed as sent, a 400).
        expectError(
            try client.send("POST", path, json: Self.donation("gz", "y", ago: 1), headers: [("Content-Encoding", "gzip")]),
            415, "unsupported_media_type")
        // A body with no single length is refused before it is read, and the connection closed (request smuggling).
        let twice = try client.request(
            "POST", path, headers: [("Content-Type", "application/json"), ("Content-Length", "5")],
            body: Array(Self.donation("smuggled", "y", ago: 1).utf8))
        expectError(twice, 400, "ambiguous_length")
        #expect(twice.header("Connection") == "close")
        let both = try client.request(
            "POST", path, headers: [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
            body: Array("0\r\n\r\n".utf8))
        expectError(both, 400, "ambiguous_length")
        #expect(try client.request("GET", path).body.isEmpty, "nothing was recorded by any refused request")
        // The server is still well.
        #expect(try client.request("GET", "/v1/health/ready").text == #"{"status":"ready"}"#)

        // What the HTTP layer refuses before any route sees it is an operator's request like any other: its id
        // back, a line of the access log, a count under its route (they were in neither, and had no id).
        let over = try client.requestWithoutSendingItsBody(
            "POST", path, headers: [("Content-Type", "application/json"), ("X-Request-Id", "over-the-limit-1")],
            declaredLength: 5000)
        expectError(over, 413, "body_too_large")
        #expect(over.header("X-Request-Id") == "over-the-limit-1")
        let nul = try client.request("GET", "/v1/accounts/a%00b/suggestions", headers: [("X-Request-Id", "nul-target-1")])
        expectError(nul, 400, "invalid_target")
        #expect(nul.header("X-Request-Id") == "nul-target-1")
        // A name with a raw '#' (a client that joined strings into its path) was cut there: deleting the
        // conversation `general` of `team#1` deleted the whole account `team`.
        let team = try client.request(
            "POST", "/v1/accounts/team/donations", headers: [("Content-Type", "application/json")],
            body: Array(Self.donation("team-1", "general", ago: 5).utf8))
        #expect(team.status == 201)
        expectError(try client.request("DELETE", "/v1/accounts/team#1/conversations/general"), 400, "invalid_target")
        expectError(try client.request("DELETE", "/v1/accounts/team%/conversations/general"), 400, "invalid_target")
        #expect(try client.request("GET", "/v1/accounts/team/donations").text.contains("team-1"))
        // Header fields refused by the HTTP layer: the target still names the route (it was counted `unmatched`).
        let twoKeys = try client.request(
            "GET", "/v1/accounts/team/suggestions", headers: [("Authorization", "Bearer a"), ("Authorization", "Bearer b")])
        expectError(twoKeys, 400, "invalid_header")
        let metrics = try client.request("GET", "/metrics").text
        #expect(
            metrics.contains(#"suggest_http_requests_total{route="/v1/accounts/{account}/suggestions",method="GET",status="400"} 1"#),
            "\(metrics)")
        #expect(
            metrics.contains(#"suggest_http_requests_total{route="/v1/accounts/{account}/donations",method="POST",status="413"} 2"#),
            "\(metrics)")
        #expect(metrics.contains(#"route="unmatched",method="GET",status="400"} 1"#), "\(metrics)")
        server.stop()
        let log = server.process.standardErrorSoFar()
        for id in ["over-the-limit-1", "nul-target-1"] {
            #expect(log.contains(#""requestId":"\#(id)""#), "no access-log line for \(id): \(log.suffix(3000))")
        }
    }

    /// A donation over 1 MiB of JSON is refused on the server as on the command line, alone or as a line of a
    /// batch (which then records nothing): within the other limits one could be 21 MB, and `limit=1000` over such
    /// conversations would have built 21 GB of JSON.
    @Test func aDonationOver1MiBIsRefused() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        let path = "/v1/accounts/alice/donations"
        let field = String(repeating: "x", count: 4_000)
        let people = (0..<300).map { #"{"customIdentifier":"u\#($0)\#(field)","displayName":"\#(field)"}"# }
        let huge = Self.donation("huge", "crowd", ago: 2, extra: #","recipients":["# + people.joined(separator: ",") + "]")
        let alone = try server.client.send("POST", path, json: huge)
        #expect(alone.status == 400 && alone.text.contains("more than the 1 MiB a donation may take"), "\(alone.text.prefix(300))")
        let batch = Self.donation("small", "c", ago: 3) + "\n" + huge
        let refused = try server.client.send("POST", path, json: batch, contentType: "application/x-ndjson")
        #expect(refused.status == 400 && refused.text.contains("line 2: is ") && refused.text.contains("bytes of JSON as export writes it"), "\(refused.text.prefix(300))")
        #expect(try server.client.request("GET", path).body.isEmpty)
        server.stop()
    }

    /// A store deleted under the running server (`rm -rf` of a store kept in /tmp): its donations went on being
    /// acknowledged into unlinked files, lost at exit, while readiness said 200. Now every write is refused with 503
    /// and readiness says why; so is every read once the server has noticed, and a store created again at the path
    /// (by a command, which creates a missing store) is not taken for it.
    @Test(arguments: [false, true])
    func aStoreDeletedUnderTheServerIsNotWrittenTo(createdAgain: Bool) throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        let client = server.client
        let path = "/v1/accounts/alice/donations"
        #expect(try client.send("POST", path, json: Self.donation("d1", "u-1", ago: 60)).status == 201)
        #expect(try client.request("GET", "/v1/health/ready").status == 200)
        #expect(try client.request("GET", "/v1/accounts/alice/suggestions").status == 200)
        #expect(system("rm -rf '\(scratch("store"))'") == 0)
        if createdAgain {
            let created = try Suggest.run(
                ["donate", "--conversation", "other", "--account", "alice", "--store", scratch("store")], scratch: scratch.path)
            #expect(created.status == 0)
        }
        let refused = try client.send("POST", path, json: Self.donation("d2", "u-2", ago: 30))
        #expect(refused.status == 503 && refused.text.contains("store_failed") && refused.text.contains("deleted or moved"), "\(refused.status) \(refused.text)")
        let batch = [Self.donation("d3", "u-3", ago: 20), Self.donation("d4", "u-4", ago: 10)].joined(separator: "\n")
        #expect(try client.send("POST", path, json: batch, contentType: "application/x-ndjson").status == 503)
        let ready = try client.request("GET", "/v1/health/ready")
        #expect(ready.status == 503 && ready.text.contains("deleted or moved"), "\(ready.text)")
        // The store's path is the operator's business: in the log, under the request's id, not in the answers
        // (readiness needs no key).
        for answer in [refused, ready] {
            #expect(!answer.text.contains(scratch.path), "\(answer.text)")
        }
        let read = try client.request("GET", "/v1/accounts/alice/suggestions")
        #expect(read.status == 503 && read.text.contains("deleted or moved"), "\(read.text)")
        // Connections opened since (more at once than the pool holds) do not find another store either.
        for _ in 0..<3 {
            #expect(try client.send("POST", path, json: Self.donation("d5", "u-5", ago: 5)).status == 503)
            #expect(try client.request("GET", "/v1/accounts/alice/donations").status == 503)
        }
        // The periodic checkpoint says so in the log, once, not every second.
        sleepSeconds(3.5)
        server.stop()
        let log = server.process.standardErrorSoFar()
        #expect(log.split(separator: "\n").filter { $0.contains("checkpoint failed") }.count == 1, "\(log.suffix(2000))")
        let refusedID = try #require(refused.header("X-Request-Id"))
        #expect(
            log.split(separator: "\n").contains { $0.contains(refusedID) && $0.contains("storeError") && $0.contains("suggest.sqlite") },
            "\(log.suffix(2000))")
        #expect(log.contains(#""event":"store not ready""#))
    }

    @Test func serviceRoutes() throws {
        let scratch = try TemporaryDirectory("serve")
        let server = try ServeProcess(["--store", scratch("store")], scratch: scratch.path)
        let client = server.client
        #expect(try client.request("GET", "/v1/health/live").text == #"{"status":"live"}"#)
        // HEAD wherever GET is (it was 405): the same head, no body.
        for path in ["/v1/health/live", "/v1/openapi.json", "/metrics"] {
            let head = try client.request("HEAD", path)
            let get = try client.request("GET", path)
            #expect(head.status == 200 && head.body.isEmpty, "HEAD \(path)")
            #expect(head.header("Content-Type") == get.header("Content-Type"), "HEAD \(path)")
        }
        #expect(try client.request("HEAD", "/v1/openapi.json").header("Content-Length")
            == String(try client.request("GET", "/v1/openapi.json").body.count))
        #expect(try client.request("POST", "/v1/health/live").header("Allow") == "GET, HEAD")
        let version = try client.request("GET", "/v1/version").text
        #expect(version.hasPrefix(#"{"name":"suggest","version":""#))
        // One version in every door: the document's and the command line's too (the document said 0.2.0 where
        // `suggest --version` said 0.1.0).
        let number = version.split(separator: "\"").dropFirst(7).first.map(String.init) ?? "?"
        #expect(try client.request("GET", "/v1/openapi.json").text.contains(#""version": "\#(number)""#))
        let command = try Suggest.run(["--version"], scratch: scratch.path)
        #expect(String(decoding: command.standardOutput, as: UTF8.self) == "suggest \(number)\n")
        let document = try client.request("GET", "/v1/openapi.json")
        #expect(document.status == 200)
        #expect(document.body == (try readFile(Suggest.packageRoot + "/Sources/SuggestServer/Resources/openapi.json")))
        // No object names a member twice (strict validators refuse it; an edit once gave three operations two
        // "413"s).
        func repeatedKeys(_ value: JSONValue, _ path: String) -> [String] {
            switch value {
            case .object(let members):
                let keys = members.map { $0.key }
                let repeated = Set(keys.filter { key in keys.count(where: { $0 == key }) > 1 }).map { path + "/" + $0 }
                return repeated + members.flatMap { repeatedKeys($0.value, path + "/" + $0.key) }
            case .array(let values): return values.enumerated().flatMap { repeatedKeys($1, path + "/\($0)") }
            default: return []
            }
        }
        let parsed = try document.body.withUnsafeBufferPointer { try JSONParser.parse(bytes: $0) }
        #expect(repeatedKeys(parsed, "").isEmpty, "\(repeatedKeys(parsed, ""))")
        // A request id given is echoed; one is made up otherwise.
        let echoed = try client.request("GET", "/v1/health/live", headers: [("X-Request-Id", "abc-123")])
        #expect(echoed.header("X-Request-Id") == "abc-123")
        let made = try (0..<20).map { _ in try client.request("GET", "/v1/health/live").header("X-Request-Id") ?? "" }
        #expect(made.allSatisfy { $0.utf8.count == 16 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } })
        #expect(Set(made).count == made.count, "every request made up is another id")
        _ = try client.send("POST", "/v1/accounts/a/donations", json: Self.donation("1", "c", ago: 1))
        _ = try client.request("GET", "/v1/accounts/a/suggestions")
        let metrics = try client.request("GET", "/metrics")
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.text.contains(#"suggest_http_requests_total{route="/v1/accounts/{account}/suggestions",method="GET",status="200"} 1"#))
        #expect(metrics.text.contains(#"suggest_http_request_duration_seconds_bucket{route="/v1/accounts/{account}/donations",method="POST",le="+Inf"} 1"#))
        #expect(metrics.text.contains("suggest_donations_recorded_total 1"))
        #expect(!metrics.text.contains("/v1/accounts/a/"), "metrics name route templates, never raw paths")
        // Methods a client makes up are counted together: one series, not one each.
        for index in 0..<20 {
            #expect(try client.request("MADEUP\(index)", "/v1/accounts/a/suggestions").status == 405)
        }
        let after = try client.request("GET", "/metrics").text
        #expect(!after.contains("MADEUP"), "\(after)")
        #expect(after.contains(#"suggest_http_requests_total{route="/v1/accounts/{account}/suggestions",method="other",status="405"} 20"#), "\(after)")
        // The access log: one JSON line per request, with its route template, never its path.
        server.stop()
        let log = server.process.standardErrorSoFar()
        #expect(log.contains(#""requestId":"abc-123","method":"GET","route":"/v1/health/live","status":200"#))
        #expect(!log.contains("/v1/accounts/a/"))
    }
}
