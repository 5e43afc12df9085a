import SuggestCore

extension ShareTarget {
    /// Reads a share extension's Info.plist, in XML or binary form.
    /// - Parameter path: the file's path.
    /// - Throws: `ShareTargetError`: `.unreadable` when the file cannot be read, `.malformed` with the line and
    ///   column (XML) or byte offset (binary) of a syntax error, `.invalidRule` for a missing or invalid
    ///   activation rule (with the character position of a predicate error), `.invalidValue` for other values
    ///   of the wrong type.
    /// - Complexity: O(n) in the size of the file.
    public static func load(infoPlistAt path: String) throws(ShareTargetError) -> ShareTarget {
        let bytes: [UInt8]
        do {
            bytes = try FileReader.read(path)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        let plist: PropertyListValue
        do {
            plist = try PropertyListValue(parsing: bytes)
        } catch {
            throw .malformed(path: path, error)
        }
        return try ShareTarget(infoPlist: plist, path: path)
    }

    /// Builds a target from a parsed Info.plist.
    /// - Parameter path: how to name the file in errors.
    /// - Throws: `ShareTargetError.invalidRule` or `.invalidValue`.
    public init(infoPlist: PropertyListValue, path: String = "Info.plist") throws(ShareTargetError) {
        guard case .dictionary(let root) = infoPlist else {
            throw .invalidValue(
                path: path, field: "the top level", problem: "is \(infoPlist.kindName); an Info.plist is a dictionary")
        }
        let attributes = try Self.attributes(root, path: path)
        guard let ruleValue = attributes["NSExtensionActivationRule"] else { throw .invalidRule(path: path, .missing) }
        let rule: ActivationRule
        do {
            rule = try ActivationRule(propertyList: ruleValue)
        } catch {
            throw .invalidRule(path: path, error)
        }
        var intents: [String] = []
        if let value = attributes["IntentsSupported"] {
            let field = "NSExtension.NSExtensionAttributes.IntentsSupported"
            guard case .array(let elements) = value else {
                throw .invalidValue(
                    path: path, field: field, problem: "is \(value.kindName); it must be an array of intent names")
            }
            for (index, element) in elements.enumerated() {
                guard case .string(let name) = element else {
                    throw .invalidValue(
                        path: path, field: "\(field)[\(index)]",
                        problem: "is \(element.kindName); it must be an intent name such as INSendMessageIntent")
                }
                intents.append(name)
            }
        }
        var declarations: [(type: String, parents: [String])] = []
        for key in ["UTExportedTypeDeclarations", "UTImportedTypeDeclarations"] {
            guard let value = root[key] else { continue }
            declarations += try Self.declarations(value, field: key, path: path)
            guard declarations.count <= Self.maximumDeclaredTypes else {
                throw .invalidValue(
                    path: path, field: key,
                    problem: "holds more than \(Self.maximumDeclaredTypes) type declarations with the other declarations; an app declares a few")
            }
        }
        let types = UniformTypeTree.standard.declaring(declarations)
        let declared = declarations.map(\.type)
        let displayName = root["CFBundleDisplayName"]?.stringValue
        self.init(
            activationRule: rule, types: types, intentsSupported: intents, declaredTypes: declared,
            displayName: displayName)
    }

    private static func attributes(
        _ root: [String: PropertyListValue], path: String
    ) throws(ShareTargetError) -> [String: PropertyListValue] {
        guard let extensionValue = root["NSExtension"] else {
            throw .invalidValue(
                path: path, field: "NSExtension",
                problem: "is missing; this is not an app extension's Info.plist (give the share extension's "
                    + "Info.plist, not the app's)")
        }
        guard case .dictionary(let extensionMembers) = extensionValue else {
            throw .invalidValue(
                path: path, field: "NSExtension", problem: "is \(extensionValue.kindName); it must be a dictionary")
        }
        guard let attributesValue = extensionMembers["NSExtensionAttributes"] else {
            throw .invalidRule(path: path, .missing)
        }
        guard case .dictionary(let attributes) = attributesValue else {
            throw .invalidValue(
                path: path, field: "NSExtension.NSExtensionAttributes",
                problem: "is \(attributesValue.kindName); it must be a dictionary")
        }
        return attributes
    }

    /// The most type declarations an Info.plist may hold (exported and imported together), and the most types one
    /// declaration may conform to directly: an app declares a few types of one or two parents each; 600,000
    /// declared types made each conformance check of a share walk them all.
    static let maximumDeclaredTypes = 1_000
    static let maximumParents = 32

    /// Whether a declared type's parent is a uniform type identifier, by the rule the declared type is held to.
    /// One that is not (an underscore, a stray space, an empty string: hand-written plists have them) conforms
    /// nothing to anything and is left out rather than refusing the whole file, as the system leaves it out; left
    /// out, it is never copied either (a parent of 15 MB, named by a thousand declarations, was copied lowercased
    /// for each of them: gigabytes).
    private static func isTypeIdentifier(_ parent: String) -> Bool {
        Attachment.problem(withTypeIdentifier: parent) == nil
    }

    /// The `(UTTypeIdentifier, UTTypeConformsTo)` pairs of a type-declaration array.
    private static func declarations(
        _ value: PropertyListValue, field: String, path: String
    ) throws(ShareTargetError) -> [(type: String, parents: [String])] {
        guard case .array(let elements) = value else {
            throw .invalidValue(
                path: path, field: field, problem: "is \(value.kindName); it must be an array of type declarations")
        }
        var result: [(type: String, parents: [String])] = []
        for (index, element) in elements.enumerated() {
            let here = "\(field)[\(index)]"
            guard case .dictionary(let declaration) = element else {
                throw .invalidValue(path: path, field: here, problem: "is \(element.kindName); it must be a dictionary")
            }
            guard case .string(let identifier)? = declaration["UTTypeIdentifier"] else {
                throw .invalidValue(
                    path: path, field: here + ".UTTypeIdentifier",
                    problem: "is missing or not a string; give the type's UTI")
            }
            if let problem = Attachment.problem(withTypeIdentifier: identifier) {
                throw .invalidValue(path: path, field: here + ".UTTypeIdentifier", problem: "is invalid: \(problem)")
            }
            var parents: [String] = []
            switch declaration["UTTypeConformsTo"] {
            case nil: break
            case .string(let parent)?:  // Apple accepts a single string too
                if Self.isTypeIdentifier(parent) { parents = [parent] }
            case .array(let list)?:
                guard list.count <= Self.maximumParents else {
                    throw .invalidValue(
                        path: path, field: here + ".UTTypeConformsTo",
                        problem: "names \(list.count) types; a type conforms to at most \(Self.maximumParents) directly")
                }
                for (position, parent) in list.enumerated() {
                    guard case .string(let name) = parent else {
                        throw .invalidValue(
                            path: path, field: "\(here).UTTypeConformsTo[\(position)]",
                            problem: "is \(parent.kindName); it must be a UTI string")
                    }
                    if Self.isTypeIdentifier(name) { parents.append(name) }
                }
            case let other?:
                throw .invalidValue(
                    path: path, field: here + ".UTTypeConformsTo",
                    problem: "is \(other.kindName); it must be an array of UTIs")
            }
            result.append((identifier, parents))
        }
        return result
    }
}
