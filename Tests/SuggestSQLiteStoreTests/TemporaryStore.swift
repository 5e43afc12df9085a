import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport

/// A store in a fresh temporary directory, removed when the test ends.
final class TemporaryStore {
    let temporary: TemporaryDirectory
    let store: SQLiteDonationStore
    var directory: String { temporary.path }

    init(retention: Retention = Retention(maximumAgeDays: 0, idleDays: 0)) throws {
        temporary = try TemporaryDirectory("test")
        store = try SQLiteDonationStore.open(temporary.location)
        try store.setRetention(retention)
    }

    /// The export of an account as one string of JSON Lines.
    func export(account: String = "default") throws -> String {
        var text = ""
        try store.forEachDonation(account: account) { text += $0.jsonLine + "\n" }
        return text
    }

    /// Imports JSON Lines text.
    @discardableResult
    func importLines(_ text: String, skipInvalid: Bool = false, expectedDonations: Int? = nil) throws -> ImportReport {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().makeIterator()
        return try store.importDonations(
            ImportOptions(skipInvalid: skipInvalid, expectedDonations: expectedDonations), progress: { _ in },
            interruption: {}
        ) {
            while let (offset, line) = lines.next() {
                guard !line.isEmpty else { continue }
                do {
                    return NumberedDonation(
                        line: offset + 1, donation: .success(try Interaction(json: try JSONParser.parse(String(line)))))
                } catch let error as InputError {
                    return NumberedDonation(line: offset + 1, donation: .failure(error))
                } catch {
                    return NumberedDonation(
                        line: offset + 1, donation: .failure(InputError(field: nil, message: "\(error)")))
                }
            }
            return nil
        }
    }
}

/// The bundled sample history, read from the package.
enum SampleHistory {
    static func text() throws -> String {
        String(decoding: try readFile(Suggest.packageRoot + "/SampleData/donations.jsonl"), as: UTF8.self)
    }
}

extension TemporaryDirectory {
    /// A store in this directory.
    var location: StoreLocation { StoreLocation(directory: path) }
    /// The store's write-ahead log.
    var log: String { path + "/suggest.sqlite-wal" }
}
