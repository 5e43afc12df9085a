/// Text from other people (group names, display names, identifiers, rule texts) made safe for a terminal, and
/// measured as a terminal shows it.
///
/// Human-readable output escapes every character that would act on the terminal instead of being shown: C0 and C1
/// control characters (an escape sequence in a group name could clear the screen or recolour what follows; a line
/// break in an identifier would split a table row), the line and paragraph separators, and the bidirectional
/// embedding, override and isolate controls (a right-to-left override turns the rest of the row around, so that
/// `[u-juan]` could read as another identifier). JSON output needs none of this: its writer escapes control
/// characters itself, and programs read it.
enum TerminalText {
    /// `text` with every character that acts on a terminal written as an escape: `\n`, `\r`, `\t`, else
    /// `\u{1B}` (Swift's notation). Everything else, other scripts and emoji included, is kept.
    /// - Complexity: O(n); `text` itself when there is nothing to escape.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// One line for standard error: `message` escaped, cut to `maximumLength` characters (an error that quotes a
    /// 1.4 MB rule is not read whole by anyone), ending in a line break.
    static func line(_ message: String, maximumLength: Int = 2_000) -> String {
        var text = message
        while text.hasSuffix("\n") { text.removeLast() }
        return capped(escaped(text), maximumLength) + "\n"
    }

    /// `text` cut to `maximumLength` characters, with `…` where it was cut.
    static func capped(_ text: String, _ maximumLength: Int) -> String {
        guard text.utf8.count > maximumLength, text.count > maximumLength else { return text }
        return String(text.prefix(maximumLength - 1)) + "…"
    }

    /// Whether `scalar` must not reach a terminal as it is.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0, DEL, C1
        case 0x2028, 0x2029: return true  // line and paragraph separators
        case 0x202A...0x202E, 0x2066...0x2069: return true  // bidirectional embeddings, overrides, isolates
        default: return false
        }
    }

    // MARK: Display width

    /// The columns a terminal gives `text` (already escaped): 2 for East Asian wide and fullwidth characters and for
    /// emoji shown as emoji, 0 for combining marks and format characters on their own, 1 for the rest.
    /// - Complexity: O(n).
    static func width(_ text: String) -> Int {
        // Plain ASCII, the common case: one column per byte.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
        var columns = 0
        for character in text { columns += width(of: character) }
        return columns
    }

    /// The columns of one character (a grapheme cluster: a flag, a family emoji or a letter with accents is one).
    static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x80 { return 1 }
        if isWide(first) || first.properties.isEmojiPresentation { return 2 }
        // A text-style symbol followed by the emoji presentation selector is drawn as an emoji (❤️).
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        let zeroWidth = scalars.allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format: return true
            default: return false
            }
        }
        return zeroWidth ? 0 : 1
    }

    /// `text` cut to at most `columns` columns, whole characters only.
    static func prefix(_ text: String, columns: Int) -> String {
        guard width(text) > columns else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = width(of: character)
            if used + next > columns { break }
            result.append(character)
            used += next
        }
        return result
    }

    /// `text` followed by spaces up to `columns` columns.
    static func padded(_ text: String, to columns: Int) -> String {
        text + String(repeating: " ", count: max(0, columns - width(text)))
    }

    /// Whether a code point is East Asian Wide or Fullwidth (Unicode's EastAsianWidth.txt, W and F), apart from the
    /// emoji, which `isEmojiPresentation` finds. A few unassigned code points inside these blocks count as wide too,
    /// as terminals treat them.
    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        guard value >= 0x1100 else { return false }
        var low = 0
        var high = wideRanges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = wideRanges[middle]
            if value < range.lowerBound {
                high = middle - 1
            } else if value > range.upperBound {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }

    /// Hangul Jamo, CJK punctuation, kana, CJK ideographs and their extensions, Yi, Hangul syllables, compatibility
    /// ideographs, vertical and small forms, fullwidth forms, Tangut, Khitan, Nüshu, kana supplements, enclosed
    /// ideographs: in code point order, for a binary search.
    static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x3247, 0x3250...0x4DBF, 0x4E00...0xA4C6,
        0xA960...0xA97C, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6B, 0xFF01...0xFF60,
        0xFFE0...0xFFE6, 0x16FE0...0x16FF1, 0x17000...0x18D08, 0x1AFF0...0x1B2FB, 0x1F200...0x1F265,
        0x20000...0x3FFFD,
    ]
}
