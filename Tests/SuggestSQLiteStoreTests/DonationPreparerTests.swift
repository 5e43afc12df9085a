import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestSQLiteStore

/// A preparer that reuses recent snapshot bodies, and intents by their JSON's bytes, gives every donation what it
/// would have without reuse.
@Suite struct DonationPreparerTests {
    /// Lines whose intents repeat byte for byte, differ only in white space, member order, an escape or content
    /// types, or are invalid: each prepared as a line gives what a fresh decode and preparation give, or the same
    /// error.
    /// With memo generations of 3 intents (of the 10 in use), memos move between generations and are dropped.
    @Test(arguments: [1 << 16, 3]) func linesPreparedWithTheMemoOfIntentsEqualFreshOnes(memoLimit: Int) throws {
        let temporary = try TemporaryStore()
        let preparer = DonationPreparer(types: temporary.store.types, memoLimit: memoLimit)
        var random = SeededRandom(seed: 6)
        let intents = [
            #"{"conversationIdentifier":"c-1","recipients":[{"customIdentifier":"p-1","displayName":"Ann"}]}"#,
            #"{ "conversationIdentifier" : "c-1", "recipients" : [ {"customIdentifier":"p-1","displayName":"Ann"} ] }"#,
            #"{"recipients":[{"displayName":"Ann","customIdentifier":"p-1"}],"conversationIdentifier":"c-1"}"#,
            #"{"conversationIdentifier":"c-1","recipients":[{"customIdentifier":"p-1","displayName":"Ann"}]}"#,
            #"{"conversationIdentifier":"c-1","contentTypes":["public.jpeg"],"recipients":[{"customIdentifier":"p-1"}]}"#,
            #"{"conversationIdentifier":"c-2","speakableGroupName":"Café","sender":{"customIdentifier":"me","isMe":true}}"#,
            #"{"conversationIdentifier":"c-2","speakableGroupName":"Café","content":"a "quoted" {brace}"}"#,
            #"{"conversationIdentifier":"c-3","image":"x","recipients":[]}"#,
            #"{"conversationIdentifier":""}"#,  // invalid: the tree path words the error
            #"{"conversationIdentifier":"c-4","recipients":[{"personHandle":{"value":"a@b","type":"emailAddress"}}]}"#,
        ]
        for index in 0..<3_000 {
            let intent = intents.randomElement(using: &random)!
            let account = Bool.random(using: &random) ? "" : #""account":"other","#
            var line = #"{\#(account)"identifier":"d-\#(index)","date":\#(index),"intent":\#(intent)}"#
            // A second intent member that the fast path gives up on (an escaped name, or an escaped key inside it):
            // the tree path takes it, the last, and this line's donation must not take the first one's memo.
            switch Int.random(in: 0..<10, using: &random) {
            case 0: line.insert(contentsOf: #","\u0069ntent":\#(intents.randomElement(using: &random)!)"#, at: line.index(before: line.endIndex))
            case 1: line.insert(contentsOf: #","intent":{"\u0063onversationIdentifier":"c-9"}"#, at: line.index(before: line.endIndex))
            default: break
            }
            var bytes = Array(line.utf8)
            let viaMemo = bytes.withUnsafeBufferPointer { preparer.prepare(line: $0, defaultAccount: "default") }
            let fresh: Result<Interaction, InputError> = bytes.withUnsafeBufferPointer { buffer in
                do throws(InputError) { return .success(try Interaction(jsonBytes: buffer, defaultAccount: "default")) } catch {
                    return .failure(error)
                }
            }
            bytes.removeAll()
            switch (viaMemo, fresh) {
            case (.success(let prepared), .success(let interaction)):
                #expect(prepared.interaction == interaction)
                #expect(prepared.interaction.intent.hasSameBytes(as: interaction.intent))
                #expect(prepared.snapshotBody == interaction.intent.snapshotBody)
                #expect(prepared.contentKinds == temporary.store.types.contentKinds(of: interaction.intent.contentTypes))
                #expect(prepared.identifierKey == StableHash.key(interaction.account, "d-\(index)"))
            case (.failure(let first), .failure(let second)):
                #expect(first == second)
            default:
                Issue.record("line \(index): \(viaMemo) against \(fresh)")
            }
        }
        // A check refuses the line, as its error.
        let refused = Array(#"{"account":"x","date":1,"intent":{"conversationIdentifier":"c"}}"#.utf8).withUnsafeBufferPointer {
            preparer.prepare(line: $0, defaultAccount: "default") { (_) throws(InputError) in
                throw InputError(field: "account", message: "refused")
            }
        }
        #expect(refused.map { _ in "prepared" } == .failure(InputError(field: "account", message: "refused")))
    }

    @Test func reusedBodiesEqualFreshOnes() throws {
        let temporary = try TemporaryStore()
        let preparer = temporary.store.makePreparer()
        var random = SeededRandom(seed: 5)
        for index in 0..<5_000 {
            // Few conversations, several senders and names each, content types that must not matter to the body.
            let conversation = "c-\(Int.random(in: 0..<20, using: &random))"
            let sender = "p-\(Int.random(in: 0..<6, using: &random))"
            let interaction = Interaction(
                identifier: "d-\(index)", date: Timestamp(seconds: Double(index)),
                direction: Bool.random(using: &random) ? .incoming : .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: conversation,
                    // Two spellings of one name, equal to `==`, must keep their own bytes.
                    speakableGroupName: ["Caf\u{E9}", "Cafe\u{301}", "Group", nil].randomElement(using: &random)!,
                    recipients: [Person(customIdentifier: sender, displayName: "Person \(sender)")],
                    contentTypes: Bool.random(using: &random) ? [] : ["public.jpeg"]))
            let prepared = preparer.prepare(interaction)
            #expect(prepared.snapshotBody == interaction.intent.snapshotBody)
            #expect(prepared.conversationKey == StableHash.key("default", conversation))
        }
    }
}
