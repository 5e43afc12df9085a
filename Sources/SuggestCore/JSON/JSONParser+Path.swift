extension JSONParser {
    /// The path (`intent.recipients[0].displayName`) of the member or element that holds the byte at `offset`, read
    /// from the document's text before it; `nil` at the top level.
    ///
    /// For naming the field of an error the parser finds inside a value (a string that is not UTF-8, a number out
    /// of range): the parser itself keeps no path, since `import` parses millions of lines and almost none fails.
    /// The text before `offset` is taken as well-formed, which it is when the parser got that far. When `offset`
    /// falls on a member's name, the path is the object's.
    public static func path(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        enum Container {
            case object(member: String?)
            case array(index: Int)
        }
        var containers: [Container] = []
        var expectingName = false
        var position = 0
        let end = min(offset, bytes.count)
        scan: while position < end {
            switch bytes[position] {
            case UInt8(ascii: "{"):
                containers.append(.object(member: nil))
                expectingName = true
            case UInt8(ascii: "["):
                containers.append(.array(index: 0))
                expectingName = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !containers.isEmpty { containers.removeLast() }
                expectingName = false
            case UInt8(ascii: ","):
                switch containers.last {
                case .array(let index)?: containers[containers.count - 1] = .array(index: index + 1)
                case .object?: expectingName = true
                case nil: break
                }
            case UInt8(ascii: "\""):
                var close = position + 1
                while close < bytes.count, bytes[close] != UInt8(ascii: "\"") {
                    close += bytes[close] == UInt8(ascii: "\\") ? 2 : 1
                }
                // The byte is inside this string: it is the value (or name) being read.
                guard close < end else { break scan }
                if expectingName, case .object? = containers.last {
                    let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[position + 1..<min(close, position + 65)]), as: UTF8.self)
                    containers[containers.count - 1] = .object(member: name)
                    expectingName = false
                }
                position = close
            default:
                break
            }
            position += 1
        }
        if expectingName, case .object? = containers.last { containers.removeLast() }
        var path = ""
        for container in containers {
            switch container {
            case .object(let member?): path += path.isEmpty ? member : "." + member
            case .object(nil): break
            case .array(let index): path += "[\(index)]"
            }
        }
        return path.isEmpty ? nil : path
    }
}
