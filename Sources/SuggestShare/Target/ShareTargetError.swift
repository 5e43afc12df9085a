/// Why a share extension's Info.plist cannot be used; each message says what is wrong, where, and what to do.
public enum ShareTargetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file cannot be read.
    case unreadable(path: String, reason: String)
    /// The file is not a well-formed property list.
    case malformed(path: String, PropertyListError)
    /// The activation rule is missing or invalid.
    case invalidRule(path: String, ActivationRuleError)
    /// Another value the target needs has the wrong type (`NSExtension`, `IntentsSupported`, a type
    /// declaration); `field` is its key path, such as `UTExportedTypeDeclarations[0].UTTypeIdentifier`.
    case invalidValue(path: String, field: String, problem: String)

    /// What is wrong, where in which file, and what to do, in one line.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            // No flag named: the library reads Info.plists too (`ShareTarget.load(infoPlistAt:)`).
            return "cannot read \(path): \(reason); give the Info.plist of a share extension"
        case .malformed(let path, let error):
            let place: String
            switch error.position {
            case .line(let line, let column): place = "\(path):\(line):\(column)"
            case .byte(let offset): place = "\(path): byte \(offset)"
            }
            return "\(place): not a valid property list: \(error.message); fix the file "
                + "(plutil -lint checks it)"
        case .invalidRule(let path, let error):
            return "\(path): \(error)"
        case .invalidValue(let path, let field, let problem):
            return "\(path): \(field) \(problem)"
        }
    }

    /// For a predicate that does not parse: the offending line of the rule with a caret under the problem,
    /// for a report that has room for more than one line.
    public var excerpt: String? {
        if case .invalidRule(_, let error) = self { return error.excerpt }
        return nil
    }
}
