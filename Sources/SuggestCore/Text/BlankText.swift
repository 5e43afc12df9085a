extension String? {
    /// The string, or `nil` when it is missing, empty or white space only: a name, picture, group name or
    /// identifier like that names nothing, in what a conversation looks like, in whether it is a group and in whom
    /// a context's people find (an empty image hid the recipient's, and a name of spaces gave a blank title).
    var unlessBlank: String? {
        guard let self, self.contains(where: { !$0.isWhitespace }) else { return nil }
        return self
    }
}
