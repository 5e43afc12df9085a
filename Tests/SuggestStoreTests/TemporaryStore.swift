import SuggestCore
import SuggestStore

#if canImport(Glibc)
    import Glibc
#endif

/// A store in a fresh temporary directory, removed when the test ends.
final class TemporaryStore {
    let directory: String
    let store: DonationStore

    init(retention: Retention = Retention(maximumAgeDays: 0, idleDays: 0)) throws {
        var template = Array("/tmp/suggest-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        directory = made.map { String(cString: $0) } ?? "/tmp/suggest-test-fallback"
        store = try DonationStore.open(StoreLocation(directory: directory))
        try store.setRetention(retention)
    }

    deinit {
        for suffix in ["", "-wal", "-shm"] { unlink(directory + "/suggest.sqlite" + suffix) }
        rmdir(directory)
    }

    /// The export of an account as one string of JSON Lines.
    func export(account: String = "default") throws -> String {
        var text = ""
        try store.forEachDonation(account: account) { text += $0.jsonLine + "\n" }
        return text
    }

    /// Imports JSON Lines text.
    @discardableResult
    func importLines(_ text: String, skipInvalid: Bool = false) throws -> ImportReport {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().makeIterator()
        return try store.importDonations(skipInvalid: skipInvalid) {
            while let (offset, line) = lines.next() {
                guard !line.isEmpty else { continue }
                do {
                    return (offset + 1, .success(try Interaction(json: try JSONParser.parse(String(line)))))
                } catch let error as InputError {
                    return (offset + 1, .failure(error))
                } catch {
                    return (offset + 1, .failure(InputError(field: nil, message: "\(error)")))
                }
            }
            return nil
        }
    }
}

/// The bundled sample history, read from the package.
enum SampleHistory {
    static func text() throws -> String {
        let file = #filePath
        let root = file.firstRange(of: "/Tests/").map { String(file[..<$0.lowerBound]) } ?? "."
        let path = root + "/SampleData/donations.jsonl"
        guard let file = fopen(path, "r") else { throw StoreError(.failed, "cannot read \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
