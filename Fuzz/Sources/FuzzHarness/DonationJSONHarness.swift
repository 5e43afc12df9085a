import SuggestCore

/// The checks the donation fuzz target makes on one input: `Interaction(jsonBytes:)`, the path every `import` and
/// `eval` line and `donate --json` takes (a direct decoder, falling back to the tree), against the tree path it
/// must agree with: `JSONParser.parse(bytes:)` then `Interaction(json:)`.
///
/// Besides "never traps": the direct path accepts exactly what the tree path accepts, as the same donation; a
/// refusal points inside the input; what parses is written back by `JSONWriter` and parses to the same value; a
/// donation that is accepted survives the trip through its JSON line (the form `export` writes) and a second trip
/// gives the same text. The same holds for an intent object read on its own (`SendMessageIntent(jsonBytes:path:)`,
/// the path the store reads each conversation's latest intent back by), and an accepted donation's intent, written
/// as the store writes it, reads back unchanged.
public enum DonationJSONHarness {
    /// How far a date may move through its RFC 3339 text: `export` writes at most six fractional digits, and
    /// fewer where a double cannot hold them stably (three at year 9999, whose step is about 30 µs).
    static func dateTolerance(_ date: Timestamp) -> Double { 1e-6 + 64 * date.seconds.ulp }

    /// The problems found with `bytes`; empty when there are none.
    public static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        let direct = try? Interaction(jsonBytes: bytes)
        let directIntent = try? SendMessageIntent(jsonBytes: bytes, path: "intent")
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes: bytes)
        } catch {
            var problems = direct == nil && directIntent == nil ? [] : ["the direct decoder accepted text that is not JSON"]
            if !(0...bytes.count).contains(error.offset) {
                problems.append("the error offset \(error.offset) is outside the input of \(bytes.count) bytes")
            }
            return problems
        }
        var problems: [String] = []
        if direct != (try? Interaction(json: json)) {
            problems.append("the direct decoder and the tree path read different donations")
        }
        if directIntent != (try? SendMessageIntent(json: json, path: "intent")) {
            problems.append("the direct decoder and the tree path read different intents")
        }
        var writer = JSONWriter()
        writer.value(json)
        do {
            if try JSONParser.parse(writer.text) != json { problems.append("JSONWriter changed the value") }
        } catch {
            problems.append("JSONWriter wrote text that does not parse: \(error)")
        }
        guard let donation = try? Interaction(json: json) else { return problems }
        var intentWriter = JSONWriter()
        donation.intent.write(to: &intentWriter)
        let stored = Array(intentWriter.text.utf8)
        if stored.withUnsafeBufferPointer({ try? SendMessageIntent(jsonBytes: $0, path: "intent") }) != donation.intent {
            problems.append("an accepted donation's intent, written as the store keeps it, reads back differently")
        }
        let line = donation.jsonLine
        let again: Interaction
        do {
            again = try Interaction(json: try JSONParser.parse(line))
        } catch {
            return problems + ["an accepted donation's JSON line is refused: \(error)"]
        }
        var expected = again
        expected.date = donation.date
        if expected != donation { problems.append("the JSON line changed the donation") }
        if !(abs(again.date.seconds - donation.date.seconds) <= dateTolerance(donation.date)) {
            problems.append("the JSON line moved the date from \(donation.date.seconds) to \(again.date.seconds)")
        }
        if again.jsonLine != line { problems.append("a second trip changed the JSON line") }
        return problems
    }

    public static func check(_ bytes: [UInt8]) -> [String] {
        bytes.withUnsafeBufferPointer { check($0) }
    }
}
