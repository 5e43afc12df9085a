/// What was sent or received (`INSendMessageIntent`), without the message text.
///
/// The text (`content`) may arrive in a donation but is never kept: the store holds no message text.
public struct SendMessageIntent: Sendable, Hashable {
    /// The conversation a suggestion points at, and the key the share extension preselects by.
    public var conversationIdentifier: String
    /// The name of a group conversation as it should be shown and spoken. Never empty: an empty name is none
    /// (`nil`), which would otherwise make any conversation a group with a blank title.
    public var speakableGroupName: String? {
        didSet { speakableGroupName = speakableGroupName.noneIfEmpty }
    }
    /// The service the message went through (`INSendMessageIntent.serviceName`: `sms`, `chat.example`); a
    /// ranking context's `serviceName` keeps the conversations whose latest donation names it. Never empty: an empty
    /// one is none (`nil`), since no context could name it.
    public var serviceName: String? {
        didSet { serviceName = serviceName.noneIfEmpty }
    }
    /// Who sent the message (`INSendMessageIntent.sender`). Kept and exported, but not matched: a ranking
    /// context's people are looked up among the recipients.
    public var sender: Person?
    /// The people of the conversation (`INSendMessageIntent.recipients`), whose `matchKeys` a ranking context's
    /// people match; more than one makes the conversation a group.
    public var recipients: [Person]
    /// A reference to the conversation's picture (shown before each recipient's own). Never empty: an empty one is
    /// none (`nil`), as an empty group name is.
    public var image: String? {
        didSet { image = image.noneIfEmpty }
    }
    /// The uniform type identifiers of what was sent, such as `public.jpeg`.
    public var contentTypes: [String]

    /// An intent, as given but for an empty group name, service or picture, taken as none: nothing is checked here
    /// (`init(json:path:)` applies the contract's rules).
    public init(
        conversationIdentifier: String, speakableGroupName: String? = nil, serviceName: String? = nil,
        sender: Person? = nil, recipients: [Person] = [], image: String? = nil, contentTypes: [String] = []
    ) {
        self.conversationIdentifier = conversationIdentifier
        self.speakableGroupName = speakableGroupName.noneIfEmpty
        self.serviceName = serviceName.noneIfEmpty
        self.sender = sender
        self.recipients = recipients
        self.image = image.noneIfEmpty
        self.contentTypes = contentTypes
    }

    /// Whether the conversation is a group: it has a group name, or more than one person other than the user among
    /// its recipients. The user's own entry (`isMe`, which a backend that lists a room's members includes), a
    /// person given twice, and one with no field that names them do not make a conversation with one person a group,
    /// which would be weighed as a group and labelled so. A blank name is none.
    public var isGroup: Bool {
        if speakableGroupName.unlessBlank != nil { return true }
        // Asked of every donation recorded: most name one recipient, and need no set of identities.
        guard recipients.count > 1 else { return false }
        return Self.otherPeople(in: recipients).count > 1
    }

    /// The people a ranking context's people (`--person`) are looked up among: the recipients and the sender,
    /// except the user's own entry (`isMe`). A conversation known only from messages someone sent the user,
    /// donated with their sender (as apps donate a received message), is theirs too: a photo of them raises it;
    /// and the user's own identifier raises none (it raised every conversation whose recipients listed the user).
    public var participants: [Person] {
        var people = recipients.filter { $0.isMe != true }
        if let sender, sender.isMe != true { people.append(sender) }
        return people
    }

    /// Whether it says what its conversation looks like: a group name, a picture, or a recipient other than the
    /// user who names someone. A message received and donated with its sender only says none of it
    /// (`ShownDonation`), nor does one whose picture or group name is blank, or whose recipients are the user or a
    /// person with no field that names them (`{}`, a name of spaces): an app that sends those with every incoming
    /// message erased every group's name.
    public var describesConversation: Bool {
        speakableGroupName.unlessBlank != nil || image.unlessBlank != nil
            || recipients.contains { $0.isMe != true && $0.namesSomeone }
    }

    /// The recipients other than the user who name someone, each once (the first of those with one `identity`),
    /// in their order.
    static func otherPeople(in recipients: [Person]) -> [Person] {
        // Byte for byte, as every identifier is compared: `café` composed and decomposed are two people.
        var seen: Set<[UInt8]> = []
        return recipients.filter { person in
            guard person.isMe != true, let identity = person.identity else { return false }
            return seen.insert(Array(identity.utf8)).inserted
        }
    }
}

extension String? {
    /// The string, or `nil` for an empty one: the optional names of a donation are never empty.
    var noneIfEmpty: String? { self?.isEmpty == true ? nil : self }
}
