@testable import SuggestShare

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Paths of the sample extensions and helpers to build requests and files in tests.
enum Fixtures {
    /// The package root, found from this file's path (…/Tests/SuggestShareTests/Support/Fixtures.swift).
    static let repositoryRoot: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/")
    }()

    static func extensionPath(_ name: String) -> String { repositoryRoot + "/SampleData/extensions/" + name }

    /// The bytes of a sample extension's Info.plist.
    static func bytes(_ name: String) throws -> [UInt8] {
        do {
            return try FileReader.read(extensionPath(name))
        } catch {
            throw FixtureError(message: "cannot read \(name): \(error.reason)")
        }
    }

    struct FixtureError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A request with one extension item per element of `items`; each attachment is written `UTI=VALUE`, with
    /// several types joined by `+` (`public.file-url+com.adobe.pdf=/tmp/a.pdf`).
    static func request(_ items: [[String]]) -> ShareRequest {
        ShareRequest(
            items: items.map { attachments in
                ExtensionItem(attachments: attachments.map(attachment))
            })
    }

    static func attachment(_ text: String) -> Attachment {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let types = parts[0].split(separator: "+").map(String.init)
        let value = parts.count > 1 ? String(parts[1]) : ""
        return Attachment(typeIdentifiers: types, value: Attachment.inferredValue(value, for: types[0]))
    }

    /// Writes `bytes` to a new temporary file and returns its path.
    static func temporaryFile(_ bytes: [UInt8]) throws -> String {
        var template = Array("/tmp/suggest-share-test-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else { throw FixtureError(message: "mkstemp failed") }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { raw in write(descriptor, raw.baseAddress, raw.count) }
        guard written == bytes.count else { throw FixtureError(message: "short write") }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func remove(_ path: String) { unlink(path) }
}


/// The character offset of the first occurrence of `needle` in `text` (for expected error positions).
func offset(of needle: String, in text: String, occurrence: Int = 1) -> Int {
    let haystack = Array(text.unicodeScalars)
    let pattern = Array(needle.unicodeScalars)
    var seen = 0
    var index = 0
    while index + pattern.count <= haystack.count {
        if Array(haystack[index..<(index + pattern.count)]) == pattern {
            seen += 1
            if seen == occurrence { return index }
        }
        index += 1
    }
    return -1
}
