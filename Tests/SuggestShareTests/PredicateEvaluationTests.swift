import SuggestCore
import Testing

@testable import SuggestShare

@Suite("Predicate evaluation")
struct PredicateEvaluationTests {
    func holds(_ rule: String, _ object: PropertyListValue, types: UniformTypeTree = .standard) throws -> Bool {
        try ActivationPredicate(parsing: rule).evaluate(object, types: types)
    }

    let object = PropertyListValue.dictionary([
        "n": .integer(3), "r": .real(2.5), "s": .string("beta"), "yes": .bool(true),
        "list": .array([.integer(1), .integer(2), .integer(3)]), "empty": .array([]),
        "types": .array([.string("public.jpeg"), .string("public.file-url")]),
        "nested": .dictionary(["inner": .array([.dictionary(["k": .integer(1)]), .dictionary(["k": .integer(5)])])]),
    ])

    @Test(
        "comparisons",
        arguments: [
            ("n == 3", true), ("n = 3", true), ("n != 4", true), ("n < 4", true), ("n <= 3", true), ("n > 3", false),
            ("n >= 3", true), ("r > 2", true), ("r < 3", true), ("r == 2", false), ("s == 'beta'", true),
            ("s < 'gamma'", true),
            ("s > 'alpha'", true), ("s == 'Beta'", false), ("yes == 1", true), ("yes == YES", true),
            ("n == 's'", false),
            ("n != 's'", true), ("missing == nil", true), ("n == nil", false), ("missing < 3", false),
            ("list.@count == 3", true), ("empty.@count == 0", true), ("s.@count == 4", false),
            ("nested.inner.k.@count == 2", true), ("missing.@count == 0", false),
            // Subscripts, as rules apps ship use them (`extensionItems[0].attachments`).
            ("list[0] == 1", true), ("list[2] == 3", true), ("list[3] == nil", true), ("list[FIRST] == 1", true),
            ("list[LAST] == 3", true), ("list[SIZE] == 3", true), ("empty[FIRST] == nil", true),
            ("nested.inner[1].k == 5", true), ("nested.inner[LAST].k == 5", true), ("n[0] == 3", false),
        ])
    func comparisons(rule: String, expected: Bool) throws {
        #expect(try holds(rule, object) == expected, "\(rule)")
    }

    /// Strings are equal code point by code point, as `NSString`'s `isEqual:` has them: Swift's `==` took
    /// canonically equivalent strings for one ("é" and "e" with a combining accent; KELVIN SIGN and K).
    @Test("string equality and order are by code point, not canonical equivalence")
    func stringsCompareByCodePoint() throws {
        let texts = PropertyListValue.dictionary(["nfd": .string("e\u{301}"), "k": .string("K")])
        #expect(try !holds("nfd == '\u{e9}'", texts))
        #expect(try holds("nfd != '\u{e9}'", texts))
        #expect(try !holds("k == '\u{212A}'", texts))
        #expect(try holds("nfd == 'e\u{301}'", texts))
        // Neither before nor the same as the other: after.
        #expect(try holds("'\u{e9}' > nfd", texts) && !holds("'\u{e9}' <= nfd", texts))
        // Inside collections too, element by element, numbers by value as NSNumber's `isEqual:` has them.
        let lists = PropertyListValue.dictionary([
            "nfd": .array([.string("e\u{301}")]), "nfc": .array([.string("\u{e9}")]),
            "ints": .array([.integer(1)]), "reals": .array([.real(1)]),
            "a": .dictionary(["k": .string("e\u{301}")]), "b": .dictionary(["k": .string("\u{e9}")]),
        ])
        #expect(try !holds("nfd == nfc", lists) && holds("nfd == nfd", lists) && holds("ints == reals", lists))
        #expect(try !holds("a == b", lists) && holds("a == a", lists))
    }

    @Test(
        "ANY, SOME, ALL and NONE over collections",
        arguments: [
            ("ANY list == 2", true), ("SOME list > 2", true), ("ALL list > 0", true), ("ALL list > 1", false),
            ("NONE list > 3", true), ("NONE list == 1", false), ("ANY empty == 1", false), ("ALL empty == 1", true),
            ("NONE empty == 1", true), ("ANY n == 3", true), ("ANY missing == 3", false),
            ("ANY nested.inner.k == 5", true),
        ])
    func aggregates(rule: String, expected: Bool) throws {
        #expect(try holds(rule, object) == expected, "\(rule)")
    }

    @Test(
        "UTI operators: conformance is reflexive and transitive; equality is exact but case-insensitive",
        arguments: [
            ("ANY types UTI-CONFORMS-TO 'public.jpeg'", true), ("ANY types UTI-CONFORMS-TO 'public.image'", true),
            ("ANY types UTI-CONFORMS-TO 'public.data'", true), ("ANY types UTI-CONFORMS-TO 'public.item'", true),
            ("ANY types UTI-CONFORMS-TO 'public.content'", true), ("ANY types UTI-CONFORMS-TO 'public.url'", true),
            ("ANY types UTI-CONFORMS-TO 'public.movie'", false), ("ALL types UTI-CONFORMS-TO 'public.data'", true),
            ("ALL types UTI-CONFORMS-TO 'public.image'", false), ("ANY types UTI-EQUALS 'PUBLIC.JPEG'", true),
            ("ANY types UTI-EQUALS 'public.image'", false), ("types UTI-CONFORMS-TO 'public.data'", false),
            ("n UTI-CONFORMS-TO 'public.data'", false), ("s UTI-EQUALS 3", false),
            ("'public.png' UTI-CONFORMS-TO s", false),
        ])
    func utiOperators(rule: String, expected: Bool) throws {
        #expect(try holds(rule, object) == expected, "\(rule)")
    }

    /// Key-value coding through an array keeps an element that lacks the key, as `NSNull`: the array keeps its
    /// count, `nil` matches it, and reading through it gives nothing (the elements were dropped, so a rule counting
    /// items with and without text decided otherwise than iOS; a probe).
    @Test(
        "a key read through an array keeps the elements that lack it",
        arguments: [
            ("items.text.@count == 2", true), ("ANY items.text == nil", true), ("ALL items.text != nil", false),
            ("ANY items.text == 'a'", true), ("NONE items.text == 'b'", true),
            ("SUBQUERY(items.text, $t, $t == nil).@count == 1", true),
            ("items.text.deeper.@count == 2", true), ("ANY items.text.deeper == nil", true),
        ])
    func missingKeysThroughAnArray(rule: String, expected: Bool) throws {
        let items = PropertyListValue.dictionary([
            "items": .array([.dictionary(["text": .string("a")]), .dictionary([:])])
        ])
        #expect(try holds(rule, items) == expected, "\(rule)")
    }

    @Test("SUBQUERY filters with the variable bound and bare keys reading the element")
    func subquery() throws {
        #expect(try holds("SUBQUERY(list, $x, $x >= 2).@count == 2", object))
        #expect(try holds("SUBQUERY(nested.inner, $e, $e.k > 1).@count == 1", object))
        #expect(try holds("SUBQUERY(nested.inner, $e, k > 1).@count == 1", object))
        #expect(try holds("SUBQUERY(nested.inner, $e, SELF.k > 1).@count == 1", object))
        #expect(try holds("SUBQUERY(missing, $e, $e == 1).@count == 0", object))
        #expect(try holds("SUBQUERY(SUBQUERY(list, $x, $x > 1), $y, $y < 3).@count == 1", object))
        // An outer variable stays visible inside an inner SUBQUERY (whose bare keys read its own element).
        let groups = PropertyListValue.dictionary([
            "groups": .array([
                .dictionary(["values": .array([.integer(1), .integer(2)]), "minimum": .integer(2)]),
                .dictionary(["values": .array([.integer(5)]), "minimum": .integer(9)]),
            ])
        ])
        #expect(
            try holds("SUBQUERY(groups, $g, SUBQUERY($g.values, $v, $v >= $g.minimum).@count == 1).@count == 1", groups)
        )
        #expect(
            try holds("SUBQUERY(groups, $g, SUBQUERY($g.values, $v, groups == nil).@count > 0).@count == 2", groups))
    }

    @Test("boolean structure and constants")
    func booleans() throws {
        #expect(try holds("TRUEPREDICATE", object))
        #expect(try !holds("FALSEPREDICATE", object))
        #expect(try holds("n == 3 AND (s == 'x' OR yes == YES)", object))
        #expect(try !holds("NOT (n == 3)", object))
        #expect(try holds("!(n == 4) && !FALSEPREDICATE", object))
    }

    @Test("conformance uses the target's declared types")
    func customTypes() throws {
        let types = UniformTypeTree.standard.declaring("com.example.sketch", conformsTo: ["public.image"])
        let sketch = PropertyListValue.dictionary(["types": .array([.string("com.example.sketch")])])
        #expect(try holds("ANY types UTI-CONFORMS-TO 'public.data'", sketch, types: types))
        #expect(try !holds("ANY types UTI-CONFORMS-TO 'public.data'", sketch))
    }

    /// A rule that reads the first item alone, as KnitNote's shipped one does.
    @Test("a subscript picks one extension item")
    func subscriptOfTheItems() throws {
        let rule = try ActivationPredicate(parsing: """
            SUBQUERY(extensionItems[0].attachments, $a,
                ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "public.image").@count >= 1
            """)
        #expect(rule.evaluate(Fixtures.request([["public.jpeg=a.jpg"], ["public.plain-text=b"]]).matchingDictionary))
        #expect(!rule.evaluate(Fixtures.request([["public.plain-text=b"], ["public.jpeg=a.jpg"]]).matchingDictionary))
        #expect(!rule.evaluate(Fixtures.request([]).matchingDictionary))
        #expect(rule.description.contains("extensionItems[0]"))
        // Its refusal names the item it reads, not "attachments" of every item.
        let second = try ActivationPredicate(parsing: """
            SUBQUERY(extensionItems[1].attachments, $a,
                ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "public.image").@count >= 1
            """)
        let refused = second.decision(for: Fixtures.request([["public.jpeg=a.jpg"], ["com.adobe.pdf=b.pdf"]]))
        #expect(refused.reason?.hasPrefix("the rule needs at least 1 element of extensionItems[1].attachments that "
            + "conforms to public.image") == true, "\(String(describing: refused.reason))")
        let size = try ActivationPredicate(parsing: "extensionItems[SIZE] == 2")
        #expect(size.decision(for: Fixtures.request([["public.jpeg=a.jpg"]])).reason?.hasPrefix(
            "the rule needs exactly 2 extension items") == true)
    }

    @Test("the matching dictionary has iOS's shape")
    func matchingDictionary() {
        var item = ExtensionItem(
            attachments: [
                Attachment(typeIdentifiers: ["com.adobe.pdf", "public.file-url"], value: .file(path: "/a.pdf"))
            ],
            contentText: "hello")
        item.userInfo["source"] = .string("mail")
        #expect(
            ShareRequest(items: [item]).matchingDictionary
                == .dictionary([
                    "extensionItems": .array([
                        .dictionary([
                            "attachments": .array([
                                .dictionary([
                                    "registeredTypeIdentifiers": .array([
                                        .string("com.adobe.pdf"), .string("public.file-url"),
                                    ])
                                ])
                            ]),
                            "contentText": .string("hello"), "source": .string("mail"),
                        ])
                    ])
                ]))
    }

    @Test("contentText and other item keys are visible to rules")
    func itemKeys() throws {
        var item = ExtensionItem(attachments: [], contentText: "hi")
        item.userInfo["supportsJavaScript"] = .bool(true)
        let request = ShareRequest(items: [item])
        let rule = try ActivationPredicate(
            parsing: "ANY extensionItems.contentText == 'hi' AND ANY extensionItems.supportsJavaScript == YES")
        #expect(rule.decision(for: request).activated)
    }

    /// A constant inside a SUBQUERY has no text of its own to quote: the refusal named it "``".
    @Test func aConstantInARefusalIsNamed() throws {
        let always = try ActivationPredicate(parsing: "SUBQUERY(extensionItems, $i, TRUEPREDICATE).@count == 2")
        let reason = always.decision(for: ShareRequest(items: [ExtensionItem(attachments: [])])).reason ?? ""
        #expect(reason.contains("for which `TRUEPREDICATE` holds") && !reason.contains("``"), "\(reason)")
        let never = try ActivationPredicate(parsing: "SUBQUERY(extensionItems, $i, FALSEPREDICATE).@count > 0")
        let refused = never.decision(for: ShareRequest(items: [ExtensionItem(attachments: [])])).reason ?? ""
        #expect(refused.contains("`FALSEPREDICATE`") && !refused.contains("``"), "\(refused)")
    }

    /// A NOT that refuses is quoted without its own keyword: "needs not `NOT (...)`" said the opposite of the rule;
    /// and a rule that counts extension items hears how many were shared: "needs exactly 2 extension items; got 2
    /// attachments of public.jpeg and public.png" read as met (both found by a probe).
    @Test func refusalsOfNotAndOfItemCountsSayWhatWasShared() throws {
        let jpeg = Attachment(typeIdentifiers: ["public.jpeg"])
        let png = Attachment(typeIdentifiers: ["public.png"])
        for rule in ["NOT (extensionItems.@count == 1)", "!(extensionItems.@count == 1)"] {
            let reason = try ActivationPredicate(parsing: rule)
                .decision(for: ShareRequest(items: [ExtensionItem(attachments: [jpeg])])).reason ?? ""
            #expect(reason.hasPrefix("the rule needs not `extensionItems.@count == 1`; got "), "\(reason)")
        }
        let two = try ActivationPredicate(parsing: "extensionItems.@count == 2")
        let reason = two.decision(for: ShareRequest(items: [ExtensionItem(attachments: [jpeg, png])])).reason ?? ""
        #expect(reason.hasSuffix("; got 1 extension item with 2 attachments of public.jpeg and public.png"), "\(reason)")
    }

    /// Nested SUBQUERYs multiply their collections: four over a hundred numbers are 10^8 evaluations (22 s in a
    /// release build), six would take days. Past the budget the rule is undecided, at once, and says why; a rule of
    /// the usual shape over a thousand attachments stays well within it.
    @Test func aRuleThatWouldRunForHoursIsStoppedByItsBudget() throws {
        var rule = "$v4 == -1"
        for level in (1...4).reversed() { rule = "SUBQUERY($a.l, $v\(level), \(rule)).@count > 0" }
        let predicate = try ActivationPredicate(parsing: "SUBQUERY(extensionItems, $a, \(rule)).@count > 0")
        let item = ExtensionItem(userInfo: ["l": .array((0..<100).map { .integer($0) })])
        let decision = predicate.decision(for: ShareRequest(items: [item]))
        #expect(decision.exceededBudget && !decision.activated)
        #expect(decision.reason?.contains("more than 1000000 steps") == true, "\(decision)")
        #expect(!predicate.evaluate(ShareRequest(items: [item]).matchingDictionary))
        // Spent is never true, not even under a NOT.
        let negated = try ActivationPredicate(parsing: "NOT (SUBQUERY(extensionItems, $a, \(rule)).@count > 0)")
        #expect(!negated.evaluate(ShareRequest(items: [item]).matchingDictionary))
        #expect(negated.decision(for: ShareRequest(items: [item])).exceededBudget)

        let usual = try ActivationPredicate(
            parsing: "SUBQUERY(extensionItems, $item, SUBQUERY($item.attachments, $a, ANY $a.registeredTypeIdentifiers "
                + "UTI-CONFORMS-TO 'public.image').@count >= 1).@count >= 1")
        let photos = ExtensionItem(
            attachments: (0..<1000).map { index in
                Attachment(typeIdentifiers: ["public.jpeg", "public.file-url"], value: .file(path: "/p\(index).jpg"))
            })
        let shown = usual.decision(for: ShareRequest(items: [photos]))
        #expect(shown.activated && !shown.exceededBudget)
    }

    /// A comparison costs what it compares: a clause comparing two 10 MB strings counted one step, and 300,000 of
    /// them in one rule ran 96 s within the budget (3,000, the most a rule's 64 KiB hold, would run 1 s). Now the
    /// budget is spent after a few of them. Strings and
    /// collections of a usual size still cost next to nothing.
    @Test func aComparisonOfLargeValuesSpendsTheBudgetByTheirSize() throws {
        let large = String(repeating: "x", count: 10_000_000)
        let item = ExtensionItem(
            userInfo: [
                "a": .string(large), "b": .string(large),
                "l": .array((0..<200_000).map { _ in .string(String(repeating: "y", count: 100)) }),
                "d": .dictionary(Dictionary(uniqueKeysWithValues: (0..<200_000).map { ("k\($0)", .integer($0)) })),
            ])
        let clauses = Array(repeating: "$e.a == $e.b", count: 3_000).joined(separator: " AND ")
        let strings = try ActivationPredicate(parsing: "SUBQUERY(extensionItems, $e, \(clauses)).@count > 0")
        let started = ContinuousClock.now
        let decision = strings.decision(for: ShareRequest(items: [item]))
        #expect(decision.exceededBudget && !decision.activated)
        #expect(ContinuousClock.now - started < .seconds(10), "stopped by the budget, not run to its end")
        // Arrays of long strings and large dictionaries compared again and again: the same.
        // (Each clause holds, or for ANY fails, so that every one of them is evaluated.)
        for (clause, join) in [("$e.l == $e.l", " AND "), ("ANY $e.d == -1", " OR "), ("$e.d == $e.d", " AND ")] {
            let repeated = Array(repeating: clause, count: 2_000).joined(separator: join)
            let rule = try ActivationPredicate(parsing: "SUBQUERY(extensionItems, $e, \(repeated)).@count > 0")
            let spent = rule.decision(for: ShareRequest(items: [item])).exceededBudget
            #expect(spent, "\(clause)")
        }
        // A conformance check walks the type tree, which a target's declarations make long: each type it looks at
        // is a step. A chain of 1,000 declared types (the most a target may declare) checked against its root by
        // a thousand attachments and a rule naming it three times is over the budget.
        var chain: [(type: String, parents: [String])] = [("t.0", ["public.data"])]
        for index in 1..<1_000 { chain.append(("t.\(index)", ["t.\(index - 1)"])) }
        let deep = PredicateEvaluator(types: UniformTypeTree.standard.declaring(chain))
        let attachments = PropertyListValue.array((0..<1_000).map { _ in .string("t.999") })
        for _ in 0..<3 {
            _ = deep.holds(
                try ActivationPredicate(parsing: "ANY t UTI-CONFORMS-TO 'com.example.none'").root,
                object: .dictionary(["t": attachments]), bindings: [])
        }
        #expect(deep.budget.isSpent)
        let small = ExtensionItem(userInfo: ["a": .string("https://example.com/a"), "b": .string("https://example.com/a")])
        let usual = try ActivationPredicate(parsing: "SUBQUERY(extensionItems, $e, $e.a == $e.b).@count == 1")
        let shown = usual.decision(for: ShareRequest(items: [small]))
        #expect(shown.activated && !shown.exceededBudget)
    }
}
