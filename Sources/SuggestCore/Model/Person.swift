/// Someone taking part in a conversation (`INPerson`): a recipient or the sender.
///
/// Only references are kept: `image` names a picture (a path, URL or asset name), never its bytes.
public struct Person: Sendable, Hashable {
    /// How to reach the person (`INPersonHandle`).
    public struct Handle: Sendable, Hashable {
        /// The kind of handle (`INPersonHandleType`).
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// Any other handle, or one whose kind the app did not say.
            case unknown
            /// An email address.
            case emailAddress
            /// A phone number, kept as the app wrote it.
            case phoneNumber
        }

        /// The address itself (`INPersonHandle.value`): `juan@example.com`, `+1 555 0100`.
        public var value: String?
        /// What kind of address `value` is (`INPersonHandle.type`).
        public var type: Kind

        /// A handle; nothing is checked: the donation reader applies the contract's limits.
        /// - Parameters:
        ///   - value: the address, `nil` when the app gave none.
        ///   - type: its kind, `.unknown` when not said.
        public init(value: String?, type: Kind = .unknown) {
            self.value = value
            self.type = type
        }
    }

    /// The app's own identifier of the person, the usual key for preselection.
    public var customIdentifier: String?
    /// The name to show for the person (`INPerson.displayName`); a suggestion without a group name is titled with
    /// its recipients' names. Never empty: an empty name is none (`nil`), as an intent's group name is.
    public var displayName: String? {
        didSet { displayName = displayName.noneIfEmpty }
    }
    /// How to reach the person (`INPerson.personHandle`); its value, when not empty, is one of the `matchKeys`.
    public var personHandle: Handle?
    /// The identifier of the person in the system's contacts.
    public var contactIdentifier: String?
    /// A reference to the person's picture; never empty (an empty one is none).
    public var image: String? {
        didSet { image = image.noneIfEmpty }
    }
    /// Whether this person is the user of the device.
    public var isMe: Bool?

    /// A person; every field is optional, as in a donation, and nothing is checked (the donation reader applies the
    /// contract's limits) but for an empty name or picture, taken as none.
    public init(
        customIdentifier: String? = nil, displayName: String? = nil, personHandle: Handle? = nil,
        contactIdentifier: String? = nil, image: String? = nil, isMe: Bool? = nil
    ) {
        self.customIdentifier = customIdentifier
        self.displayName = displayName.noneIfEmpty
        self.personHandle = personHandle
        self.contactIdentifier = contactIdentifier
        self.image = image.noneIfEmpty
        self.isMe = isMe
    }

    /// Whether any field says who the person is: an identifier, a name, a handle or a picture, not blank (a name
    /// of spaces shows as none).
    public var namesSomeone: Bool {
        // Without building `identity`: asked of every recipient of every donation recorded.
        [customIdentifier, contactIdentifier, personHandle?.value, displayName, image].contains { $0.unlessBlank != nil }
    }

    /// What tells the person apart from the intent's other recipients: the kind and value of the first field that
    /// is not blank among the identifier, the contact, the handle, the name and the picture; `nil` when none is.
    var identity: String? {
        let fields: [(kind: String, value: String?)] = [
            ("c", customIdentifier), ("k", contactIdentifier), ("h", personHandle?.value), ("n", displayName),
            ("i", image),
        ]
        return fields.first { $0.value.unlessBlank != nil }.map { "\($0.kind):\($0.value ?? "")" }
    }

    /// The identifiers by which a caller may name this person in a ranking context (`--person`): the custom
    /// identifier, the contact identifier and the handle's value, each unless blank (a blank one names nobody:
    /// `--person " "` raised a conversation with a recipient whose identifier was a space).
    public var matchKeys: [String] {
        [customIdentifier, contactIdentifier, personHandle?.value].compactMap { $0.unlessBlank }
    }
}
