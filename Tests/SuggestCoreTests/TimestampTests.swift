import Testing

@testable import SuggestCore
import SuggestTestSupport

@Suite struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0.0),
        ("2026-11-29T18:03:00Z", 1_795_975_380.0),
        ("2026-11-29T19:03:00+01:00", 1_795_975_380.0),
        ("2026-11-29 18:03:00.25z", 1_795_975_380.25),
        ("2000-02-29T00:00:00-00:30", 951_784_200.0),
        ("0001-01-01T00:00:00Z", -62_135_596_800.0),
        ("9999-12-31T23:59:59Z", 253_402_300_799.0),
    ])
    func parses(text: String, seconds: Double) throws {
        let date = try #require(Timestamp(rfc3339: text))
        #expect(date.seconds == seconds)
    }

    @Test(arguments: [
        "2026-11-29", "2026-11-29T18:03:00", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-29T24:00:00Z",
        "yesterday", "2026-11-29T18:03:00Z trailing", "2026-11-29T18:03:00.Z", "2026-11-29T18:03:00+0100", "",
    ])
    func refuses(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test func formatsStablyWithTheFractionItNeeds() throws {
        #expect(Timestamp(seconds: 1_795_975_380).rfc3339 == "2026-11-29T18:03:00Z")
        #expect(Timestamp(seconds: 1_795_975_380.5).rfc3339 == "2026-11-29T18:03:00.5Z")
        #expect(Timestamp(seconds: -1).rfc3339 == "1969-12-31T23:59:59Z")
        #expect(Timestamp(seconds: -62_135_596_800).rfc3339 == "0001-01-01T00:00:00Z")
        var random = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            let date = Timestamp(seconds: Double.random(in: -6e10...2.5e11, using: &random))
            let once = date.rfc3339
            let again = try #require(Timestamp(rfc3339: once)).rfc3339
            #expect(once == again)
        }
    }

    /// `atExportPrecision` is the moment that writing it and reading it back gives, computed without the text,
    /// whatever its magnitude and sign; a moment on that grid stays as it is, and one `rfc3339` writes as seconds
    /// too.
    @Test func exportPrecisionIsWhatTheTextGivesBack() throws {
        var random = SeededRandom(seed: 11)
        for range in [-6e10...2.5e11, 1.7e9...1.8e9, -1e3...1e3] {
            for _ in 0..<20_000 {
                let date = Timestamp(seconds: Double.random(in: range, using: &random))
                let read = try #require(Timestamp(rfc3339: date.rfc3339))
                #expect(date.atExportPrecision == read, "\(date.seconds)")
                #expect(read.atExportPrecision == read, "\(read.seconds)")
            }
        }
        #expect(Timestamp(seconds: 1e300).atExportPrecision == Timestamp(seconds: 1e300))
    }

    /// One reader of dates in text for every door: the command line took `1.7e9` for `--at` where the server
    /// refused it for `?at=` (each had a copy of the rule).
    @Test func contractTextReadsRFC3339AndUnixSecondsAsJSONWritesThem() {
        #expect(Timestamp(contractText: "1764928800") == Timestamp(seconds: 1_764_928_800))
        #expect(Timestamp(contractText: "1.7649288e9") == Timestamp(seconds: 1_764_928_800))
        #expect(Timestamp(contractText: "-86400.5") == Timestamp(seconds: -86_400.5))
        #expect(Timestamp(contractText: "2025-12-05T10:00:00Z") == Timestamp(seconds: 1_764_928_800))
        for refused in ["", "+5", "0x10", "nan", "inf", "1e999", "2025-12-05", "12:00", " 5", "5 "] {
            #expect(Timestamp(contractText: refused) == nil, "\(refused)")
        }
    }
}
