import SuggestCore
import SuggestSQLiteStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The consistency check `scripts/soak.sh` runs on the store its processes wrote: cancelled (skipped) unless
/// `SOAK_STORE` names that store.
@Suite struct SoakCheckTests {
    @Test func soakedStoreIsConsistent() throws {
        guard let store = getenv("SOAK_STORE").map({ String(cString: $0) }), !store.isEmpty else {
            try Test.cancel("set SOAK_STORE to check a store written by scripts/soak.sh")
        }
        let fixture = try StoreFixture("soak-check", existing: store)
        let at = Timestamp.now()
        let ranking = try StoreCheck.rankingDifferences(store: store, at: at)
        #expect(ranking == [], "top K differs from brute force")
        let rebuild = try StoreCheck.rebuildDifferences(of: fixture, at: at)
        #expect(rebuild == [], "the stored state differs from a rebuild from export")
        let rankingVerdict = ranking.isEmpty ? "yes" : "NO"
        let rebuildVerdict = rebuild.isEmpty ? "yes" : "NO"
        print(
            "soak check: top K equals brute force in \(StoreCheck.contexts(at: at).count) contexts: \(rankingVerdict); "
                + "stored state equals a rebuild from export: \(rebuildVerdict)")
    }
}
