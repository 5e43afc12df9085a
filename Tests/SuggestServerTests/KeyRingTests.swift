import Testing

@testable import SuggestServer

@Suite struct KeyRingTests {
    /// A keys file saved by an editor that starts it with a byte-order mark is read, as a body with one is: it was
    /// refused ("not JSON (unexpected character '\xef')"), and a reload kept the old keys.
    @Test func aByteOrderMarkIsDropped() throws {
        let json = Array(#"{"keys": [{"tenant": "acme", "key": "k-acme-0001"}]}"#.utf8)
        let ring = try KeyRing(json: [0xEF, 0xBB, 0xBF] + json, name: "keys.json")
        #expect(ring.tenant(forKey: Array("k-acme-0001".utf8)[...]) == "acme")
        #expect(throws: KeyRingError.self) { try KeyRing(json: [0xEF, 0xBB] + json, name: "keys.json") }
    }

    /// The tenants a ring opens, counted once when it is made (every export asks): keys of one tenant count once.
    @Test func aRingCountsItsTenantsOnce() {
        let ring = KeyRing(entries: [
            .init(tenant: "acme", key: "k1"), .init(tenant: "globex", key: "k2"), .init(tenant: "acme", key: "k3"),
            .init(tenant: "initech", key: "k4"),
        ])
        #expect(ring.tenantCount == 3)
        #expect(KeyRing(entries: []).tenantCount == 0)
    }
}
