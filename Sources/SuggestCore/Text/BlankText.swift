extension String {
    /// Whether the string is empty or white space only: a name, picture or group name like that names nothing, in
    /// what a conversation looks like and in whether it is a group.
    var isBlank: Bool { !contains(where: { !$0.isWhitespace }) }
}

extension String? {
    /// The string, or `nil` when it is missing or blank.
    var unlessBlank: String? {
        guard let self, !self.isBlank else { return nil }
        return self
    }
}
