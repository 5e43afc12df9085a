/// Someone taking part in a conversation (`INPerson`): a recipient or the sender.
///
/// Only references are kept: `image` names a picture (a path, URL or asset name), never its bytes.
public struct Person: Sendable, Hashable {
    /// How to reach the person (`INPersonHandle`).
    public struct Handle: Sendable, Hashable {
        /// The kind of handle (`INPersonHandleType`).
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            case unknown
            case emailAddress
            case phoneNumber
        }

        public var value: String?
        public var type: Kind

        public init(value: String?, type: Kind = .unknown) {
            self.value = value
            self.type = type
        }
    }

    /// The app's own identifier of the person, the usual key for preselection.
    public var customIdentifier: String?
    public var displayName: String?
    public var personHandle: Handle?
    /// The identifier of the person in the system's contacts.
    public var contactIdentifier: String?
    /// A reference to the person's picture.
    public var image: String?
    /// Whether this person is the user of the device.
    public var isMe: Bool?

    public init(
        customIdentifier: String? = nil, displayName: String? = nil, personHandle: Handle? = nil,
        contactIdentifier: String? = nil, image: String? = nil, isMe: Bool? = nil
    ) {
        self.customIdentifier = customIdentifier
        self.displayName = displayName
        self.personHandle = personHandle
        self.contactIdentifier = contactIdentifier
        self.image = image
        self.isMe = isMe
    }

    /// The identifiers by which a caller may name this person in a ranking context (`--person`): the custom
    /// identifier, the contact identifier and the handle's value.
    public var matchKeys: [String] {
        [customIdentifier, contactIdentifier, personHandle?.value].compactMap { $0 }.filter { !$0.isEmpty }
    }
}
