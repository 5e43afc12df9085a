import SuggestCore

extension EvalResult {
    /// Writes the result as `suggest eval --json` prints it: the contract's fields first (`policy`, `donations`,
    /// `outgoing`, `evaluated`, `hitAt` keyed by the cut-off as a string, `mrr`), then `new`, `coverage`,
    /// `accounts` and `duplicates`.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("policy")
        writer.string(policy)
        writer.key("donations")
        writer.integer(donations)
        writer.key("outgoing")
        writer.integer(outgoing)
        writer.key("evaluated")
        writer.integer(evaluated)
        writer.key("hitAt")
        writer.beginObject()
        for (cutoff, rate) in hitRates {
            writer.key(String(cutoff))
            writer.number(rate)
        }
        writer.endObject()
        writer.key("mrr")
        writer.number(mrr)
        writer.key("new")
        writer.integer(new)
        writer.key("coverage")
        writer.number(coverage)
        writer.key("accounts")
        writer.integer(accounts)
        writer.key("duplicates")
        writer.integer(duplicates)
        writer.endObject()
    }

    /// The result as one line of JSON, without a line break.
    public var jsonText: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }
}
