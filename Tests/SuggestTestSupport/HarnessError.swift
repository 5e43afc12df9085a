/// A failure of the test harness itself (a file it cannot write, a process it cannot start), as opposed to a
/// failed expectation about `suggest`.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
