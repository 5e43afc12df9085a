import SuggestTestSupport
import Testing

@testable import SuggestShare

@Suite("Predicate grammar")
struct PredicateParsingTests {
    @Test(
        "keywords are case-insensitive and operator spellings are synonyms",
        arguments: [
            ("a == 1 AND b != 2", "a = 1 and b <> 2"),
            ("a == 1 && b != 2", "a == 1 AnD b != 2"),
            ("a == 1 || b == 2", "a == 1 or b == 2"),
            ("NOT a == 1", "!a == 1"),
            ("a <= 1", "a =< 1"),
            ("a >= 1", "a => 1"),
            ("ANY t UTI-CONFORMS-TO 'public.url'", "some t uti-conforms-to \"public.url\""),
            ("TRUEPREDICATE", "truepredicate"),
            ("SUBQUERY(x, $v, $v == 1).@count == 1", "subquery( x , $v , $v = 1 ).@COUNT == 1"),
        ])
    func synonyms(_ first: String, _ second: String) throws {
        #expect(try ActivationPredicate(parsing: first) == ActivationPredicate(parsing: second))
    }

    @Test("the structure of a nested rule")
    func structure() throws {
        let rule = try ActivationPredicate(
            parsing: """
                SUBQUERY(extensionItems, $item, SUBQUERY($item.attachments, $a,
                  ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "public.url").@count == $item.attachments.@count).@count > 0
                """)
        guard case .comparison(let outer) = rule.root, case .subquery(let items, let path) = outer.lhs else {
            Issue.record("not a count comparison: \(rule.root)")
            return
        }
        #expect(path == [.count])
        #expect(outer.op == .greater)
        #expect(outer.rhs == .integer(0))
        #expect(items.variable == "item")
        #expect(items.collection == .keyPath(.init(root: .key("extensionItems"), components: [])))
        guard case .comparison(let inner) = items.predicate else {
            Issue.record("the inner predicate is not a comparison")
            return
        }
        #expect(inner.rhs == .keyPath(.init(root: .variable("item"), components: [.key("attachments"), .count])))
    }

    @Test("strings take both quotes and escapes; literals YES, NO and NIL")
    func literals() throws {
        let rule = try ActivationPredicate(
            parsing: #"a == "say \"hi\"\n" OR b == 'it\'s' OR c == YES OR d == nil OR e == -3"#)
        guard case .or(let operands, _) = rule.root else {
            Issue.record("not an OR")
            return
        }
        let rhs = operands.compactMap { node -> ActivationPredicate.Expression? in
            if case .comparison(let comparison) = node { return comparison.rhs }
            return nil
        }
        #expect(rhs == [.string("say \"hi\"\n"), .string("it's"), .bool(true), .null, .integer(-3)])
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var rule: String
        /// Where the error must point: the first occurrence of this text, or the end of the rule when empty.
        var at: String
        var fragment: String
        var testDescription: String { rule.isEmpty ? "(empty)" : rule }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(rule: "", at: "", fragment: "the rule is empty"),
        ErrorCase(rule: "   \n\t ", at: "", fragment: "the rule is empty"),
        ErrorCase(rule: "SUBQUERY(extensionItems, $x, $y.a == 1).@count == 1", at: "$y", fragment: "$y is not bound"),
        ErrorCase(
            rule: "ANY $attachment.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.url\"", at: "$attachment",
            fragment: "no variables are bound here"),
        ErrorCase(
            rule:
                "SUBQUERY(extensionItems, $item, SUBQUERY($item.attachments, $a, $attachement.x == 1).@count == 1).@count == 1",
            at: "$attachement", fragment: "bound here: $item, $a"),
        ErrorCase(rule: "extensionItems.@count = = 1", at: "= 1", fragment: "expected an operand"),
        ErrorCase(rule: "ANY t UTI-CONFORMS \"a\"", at: "UTI-", fragment: "UTI-CONFORMS-TO or UTI-EQUALS"),
        ErrorCase(rule: "a == 'unterminated", at: "'", fragment: "unterminated string"),
        ErrorCase(rule: "a BEGINSWITH 'x'", at: "BEGINSWITH", fragment: "BEGINSWITH is not supported"),
        ErrorCase(rule: "a IN b", at: "IN", fragment: "IN is not supported"),
        ErrorCase(rule: "a IN {1, 2}", at: "{", fragment: "unexpected character '{'"),
        ErrorCase(rule: "(a == 1", at: "", fragment: "expected ')' to close the parenthesis opened at character 1"),
        ErrorCase(rule: "a == 1 b == 2", at: "b", fragment: "expected AND, OR or the end"),
        ErrorCase(rule: "a.@sum == 1", at: "@sum", fragment: "only @count"),
        ErrorCase(rule: "a == 1.5", at: "1", fragment: "whole numbers"),
        ErrorCase(rule: "a & b", at: "&", fragment: "'&' must be doubled"),
        ErrorCase(rule: "a | b", at: "|", fragment: "'|' must be doubled"),
        ErrorCase(rule: "a == #", at: "#", fragment: "unexpected character '#'"),
        ErrorCase(rule: "a[-1] == 1", at: "-1", fragment: "expected a position from 0, FIRST, LAST or SIZE"),
        ErrorCase(rule: "a[b] == 1", at: "b]", fragment: "expected a position from 0, FIRST, LAST or SIZE"),
        ErrorCase(rule: "a[0 == 1", at: "== 1", fragment: "expected ']' to close the '[' at character 2"),
        ErrorCase(rule: "TRUEPREDICATE FALSEPREDICATE", at: "FALSE", fragment: "expected AND, OR or the end"),
        ErrorCase(
            rule: "SUBQUERY(extensionItems, x, y == 1).@count == 1", at: "x,",
            fragment: "expected the SUBQUERY's variable"),
        ErrorCase(
            rule: "SUBQUERY(extensionItems $x, y == 1).@count == 1", at: "$x",
            fragment: "expected ',' after the SUBQUERY's collection"),
        ErrorCase(
            rule: "SUBQUERY(extensionItems, $x, $x == 1.@count == 1", at: ".@count",
            fragment: "expected ')' to close the SUBQUERY opened at character 1"),
        ErrorCase(rule: "a ==", at: "", fragment: "the rule ends where an operand"),
        ErrorCase(rule: "a", at: "", fragment: "expected a comparison operator"),
        ErrorCase(rule: "a == 99999999999999999999", at: "9", fragment: "too large"),
        ErrorCase(rule: "a == 1x", at: "x", fragment: "must not run into a name"),
        ErrorCase(rule: "a == 'bad \\q escape'", at: "\\q", fragment: "unknown escape"),
        ErrorCase(rule: "a. == 1", at: "==", fragment: "expected a key or @count after '.'"),
        ErrorCase(rule: "$ == 1", at: "$", fragment: "'$' must be followed by a variable name"),
        ErrorCase(rule: "@count == 1", at: "@count", fragment: "must follow a key path"),
        ErrorCase(rule: "a == ANY b", at: "ANY", fragment: "must come first in a comparison"),
        // The brace is read before the parser meets the operator: the message names both ways of writing one.
        ErrorCase(rule: "a.@count IN {1, 2}", at: "{1", fragment: "such as IN {1, 2} and BETWEEN {1, 2} take"),
        ErrorCase(rule: "a BETWEEN {1, 2}", at: "{1", fragment: "are not supported in activation rules"),
        ErrorCase(
            rule: "\n\n  SUBQUERY (\n\textensionItems,\n\t$e,\n\tANY $e.x UTI-CONFORMS-TO\n).@count == 1", at: ")",
            fragment: "expected an operand"),
    ]

    @Test("syntax errors point at the offending character", arguments: errorCases)
    func syntaxErrors(_ testCase: ErrorCase) {
        let expected =
            testCase.at.isEmpty ? testCase.rule.unicodeScalars.count : offset(of: testCase.at, in: testCase.rule)
        expectError {
            _ = try ActivationPredicate(parsing: testCase.rule)
        } where: { error in
            guard let error = error as? PredicateSyntaxError else { return false }
            return error.offset == expected && error.message.contains(testCase.fragment) && error.rule == testCase.rule
        }
    }

    @Test("the excerpt shows the rule's line with a caret under the problem, tabs kept")
    func excerpt() {
        let rule =
            "SUBQUERY (\n\textensionItems,\n\t$e,\n\tANY $e.registeredTypeIdentifiers UTI-CONFORMS-TO 42 ==\n).@count == 1"
        do {
            _ = try ActivationPredicate(parsing: rule)
            Issue.record("the rule parsed")
        } catch {
            #expect(error.location == .init(line: 4, column: 54))
            #expect(
                error.excerpt == "\tANY $e.registeredTypeIdentifiers UTI-CONFORMS-TO 42 ==\n\t"
                    + String(repeating: " ", count: 52) + "^")
            #expect(
                error.description == "the predicate does not parse at character 87 (line 4, column 54): "
                    + "expected ')' to close the SUBQUERY opened at character 1, found '=='")
        }
    }

    @Test("an error on the first line is reported by character alone")
    func firstLine() {
        expectError {
            _ = try ActivationPredicate(parsing: "a == ")
        } where: { error in
            (error as? PredicateSyntaxError)?.description
                == "the predicate does not parse at character 6: the rule ends where an operand (a key path, number or string) was expected"
        }
    }

    /// A rule is at most 64 KiB: the lexer holds every token before the parser reads them (a 16 MiB rule took
    /// 780 MB to be refused at its 66th character).
    @Test func aRuleLongerThanItsLimitIsRefusedBeforeItIsRead() throws {
        let long = String(repeating: "!", count: ActivationPredicate.maximumSourceBytes + 1)
        let error = try #require(throws: PredicateSyntaxError.self) { try ActivationPredicate(parsing: long) }
        #expect(error.message.contains("a rule may have at most 65536"), "\(error)")
        let fits = Array(repeating: "TRUEPREDICATE", count: 3_000).joined(separator: " AND ")
        #expect(fits.utf8.count < ActivationPredicate.maximumSourceBytes)
        #expect(throws: Never.self) { try ActivationPredicate(parsing: fits) }
    }
}
