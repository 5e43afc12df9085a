import SuggestCore
import Testing

/// The writer puts commas between members and elements at every depth, and refuses to close what it never opened.
@Suite struct JSONWriterTests {
    /// A list kept to be given again has its suggestions written once: every copy then writes the same bytes, with
    /// its own account and moment around them, and a copy whose suggestions change writes them anew.
    @Test func aRenderingIsWrittenOnceAndDroppedWithTheSuggestions() {
        func suggestion(_ identifier: String, rank: Int) -> Suggestion {
            Suggestion(
                rank: rank, conversationIdentifier: identifier, speakableGroupName: nil,
                recipients: [Person(customIdentifier: "p-" + identifier, displayName: "Person \"\(identifier)\"")],
                image: nil, conversationImage: nil, serviceName: "sms", isGroup: false, lastDate: Timestamp(seconds: 1e9),
                score: 1 / Double(rank), explanation: nil)
        }
        var kept = SuggestionList(
            account: "a", at: Timestamp(seconds: 2e9), suggestions: [suggestion("c1", rank: 1), suggestion("c2", rank: 2)])
        let plain = kept.jsonText
        kept.rendering = JSONRendering(kept.suggestions)
        #expect(kept.jsonText == plain)
        #expect(kept.rendering.map { String(decoding: $0.bytes, as: UTF8.self) }?.hasPrefix("[{\"rank\":1,") == true)
        var again = kept
        again.account = "b"
        again.at = Timestamp(seconds: 2e9 + 60)
        #expect(again.jsonText == SuggestionList(account: "b", at: again.at, suggestions: kept.suggestions).jsonText)
        again.suggestions.removeLast()
        #expect(again.rendering == nil)
        #expect(again.jsonText == SuggestionList(account: "b", at: again.at, suggestions: [kept.suggestions[0]]).jsonText)
    }

    /// A deletion whose bytes are still in the store's files says so; one that scrubbed them writes what it always
    /// wrote.
    @Test func aDeletionSaysWhenItsBytesAreStillInTheFiles() {
        var report = DeletionReport()
        report.donations = 2
        report.conversations = ["c1"]
        let scrubbed = #"{"account":"a","donations":2,"conversations":["c1"],"removedConversations":[]}"#
        #expect(report.jsonText(account: "a") == scrubbed)
        report.logTruncated = false
        #expect(
            report.jsonText(account: "a")
                == #"{"account":"a","donations":2,"conversations":["c1"],"removedConversations":[],"logTruncated":false}"#)
    }

    @Test func commasAtEveryDepth() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a")
        writer.beginArray()
        writer.integer(1)
        writer.beginObject()
        writer.key("b")
        writer.beginArray()
        writer.endArray()
        writer.key("c")
        writer.bool(true)
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.null()
        writer.endArray()
        writer.key("d")
        writer.beginObject()
        writer.endObject()
        writer.key("e")
        writer.string("x")
        writer.key("f")
        writer.number(0.5)
        writer.endObject()
        #expect(writer.text == #"{"a":[1,{"b":[],"c":true},[],null],"d":{},"e":"x","f":0.5}"#)
    }

    @Test func topLevelValuesOneAfterAnother() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.endArray()
        writer.beginObject()
        writer.endObject()
        #expect(writer.text == "[],{}")
    }

    @Test func aCloseWithNothingOpenTraps() async {
        await #expect(processExitsWith: .failure) {
            var writer = JSONWriter()
            writer.beginArray()
            writer.endArray()
            writer.endObject()
        }
    }
}
