import SuggestCore
import Testing

/// `hasSameBytes(as:)` tells apart what `==` calls equal (canonically equivalent spellings), and compares every
/// stored property: a property added to the types but not to the comparison fails here.
@Suite struct SameBytesTests {
    static let precomposed = "Caf\u{E9}"
    static let decomposed = "Cafe\u{301}"

    @Test func canonicallyEquivalentSpellingsDiffer() {
        #expect(Self.precomposed == Self.decomposed)
        let first = SendMessageIntent(conversationIdentifier: "c", speakableGroupName: Self.precomposed)
        let second = SendMessageIntent(conversationIdentifier: "c", speakableGroupName: Self.decomposed)
        #expect(first == second)
        #expect(!first.hasSameBytes(as: second))
        #expect(first.hasSameBytes(as: first))
        let person = Person(customIdentifier: "p", displayName: Self.precomposed)
        var other = person
        other.displayName = Self.decomposed
        #expect(person == other && !person.hasSameBytes(as: other))
    }

    @Test func everyPropertyCounts() {
        let person = Person(
            customIdentifier: "p", displayName: "P", personHandle: .init(value: "p@x", type: .emailAddress),
            contactIdentifier: "k", image: "i", isMe: false)
        let intent = SendMessageIntent(
            conversationIdentifier: "c", speakableGroupName: "g", serviceName: "s", sender: person, recipients: [person],
            image: "i", contentTypes: ["public.jpeg"])
        #expect(Mirror(reflecting: intent).children.compactMap(\.label) == SendMessageIntent.comparedProperties)
        #expect(Mirror(reflecting: person).children.compactMap(\.label) == Person.comparedProperties)
        #expect(
            Mirror(reflecting: Person.Handle(value: "v", type: .phoneNumber)).children.compactMap(\.label)
                == Person.Handle.comparedProperties)
        var changes: [SendMessageIntent] = []
        for change in 0..<7 {
            var changed = intent
            switch change {
            case 0: changed.conversationIdentifier = "d"
            case 1: changed.speakableGroupName = nil
            case 2: changed.serviceName = "t"
            case 3: changed.sender = nil
            case 4: changed.recipients = []
            case 5: changed.image = nil
            default: changed.contentTypes = []
            }
            changes.append(changed)
        }
        let personChanges: [(inout Person) -> Void] = [
            { $0.customIdentifier = "q" }, { $0.displayName = nil }, { $0.personHandle = nil },
            { $0.personHandle?.type = .phoneNumber }, { $0.personHandle?.value = "q@x" }, { $0.contactIdentifier = nil },
            { $0.image = "j" }, { $0.isMe = true },
        ]
        for change in personChanges {
            var changed = person
            change(&changed)
            #expect(!person.hasSameBytes(as: changed))
            changes.append(SendMessageIntent(conversationIdentifier: "c", recipients: [changed]))
        }
        for changed in changes.prefix(7) { #expect(!intent.hasSameBytes(as: changed)) }
    }
}
