import Testing

/// Expects `body` to throw an error that `matches` accepts: what Swift Testing's double-closure `#expect` did.
///
/// That overload is deprecated, and in a synchronous test running beside asynchronous ones it crashed the test
/// process about one run in two here (an over-released error, in `swift_dynamicCast` inside the matcher), where
/// `#expect(throws:)` returning the error, which this uses, never did.
public func expectError<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T,
    where matches: (any Error) throws -> Bool
) {
    let error = #expect(throws: (any Error).self, sourceLocation: sourceLocation) { _ = try body() }
    guard let error else { return }
    do {
        #expect(try matches(error), "an error that does not match: \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record(error, "the matcher threw", sourceLocation: sourceLocation)
    }
}
