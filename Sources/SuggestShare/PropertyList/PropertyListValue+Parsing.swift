extension PropertyListValue {
    /// Parses a property list in either form: binary when it starts with `bplist`, XML otherwise.
    ///
    /// - Parameter bytes: the whole file.
    /// - Throws: `PropertyListError` with a line and column (XML) or a byte offset (binary) for anything that is
    ///   not a well-formed property list. Malformed or hostile input never traps: nesting, sizes and object
    ///   references are all checked.
    /// - Complexity: O(n) in the size of the input (a binary plist's shared objects are parsed once).
    public init(parsing bytes: [UInt8]) throws(PropertyListError) {
        if bytes.starts(with: BinaryPropertyListParser.magicPrefix) {
            self = try BinaryPropertyListParser.parse(bytes)
        } else {
            self = try XMLPropertyListParser.parse(bytes)
        }
    }

    /// Parses an XML property list held in a string.
    /// - Throws: `PropertyListError` with the line and column of the problem.
    public init(parsing text: String) throws(PropertyListError) {
        try self.init(parsing: Array(text.utf8))
    }
}
