import SuggestCore
import Testing

/// The bookkeeping of a server's ranking mirrors under queries of many accounts, made-up ones included.
@Suite struct MirrorCatalogTests {
    final class Mirror: MirroredState {
        let count: Int
        let estimatedBytes: Int
        init(count: Int = 10, bytes: Int = 1_000) {
            self.count = count
            estimatedBytes = bytes
        }
    }

    static func name(_ index: Int, length: Int = 12) -> [UInt8] {
        let digits = Array(String(index).utf8)
        return digits + [UInt8](repeating: UInt8(ascii: "q"), count: max(0, length - digits.count))
    }

    /// Queries the account until it has the demand that rebuilds it, then builds and keeps its mirror.
    static func mirror(_ account: [UInt8], in catalog: inout MirrorCatalog<Mirror>) -> Bool {
        for _ in 0..<catalog.configuration.readsBeforeRebuild { _ = catalog.mirror(of: account) }
        guard catalog.nextToRebuild() == account else { return false }
        catalog.keep(Mirror(), of: account)
        return catalog.mirror(of: account) != nil
    }

    /// A probe queried 68,000 made-up accounts of 4,000-byte names through one tenant's key: the table of
    /// tracked accounts only grew, so it filled (and held 260 MB of names), and no account queried after that, of
    /// any tenant, was ever mirrored again. Now the least recently queried accounts without a mirror make room.
    @Test(arguments: [12, 4_000])
    func madeUpAccountsNeitherFillTheTableForGoodNorHoldUnboundedMemory(nameLength: Int) {
        var catalog = MirrorCatalog<Mirror>(RankingMirrorConfiguration())
        let kept = Self.name(-1, length: nameLength)
        #expect(Self.mirror(kept, in: &catalog))
        let capacity = min(MirrorCatalog<Mirror>.trackedAccounts, MirrorCatalog<Mirror>.trackedNameBudget / nameLength)
        let flood = capacity + 4_000
        for index in 0..<flood { _ = catalog.mirror(of: Self.name(index, length: nameLength)) }
        #expect(catalog.trackedCount <= MirrorCatalog<Mirror>.trackedAccounts)
        #expect(catalog.trackedCount * nameLength <= MirrorCatalog<Mirror>.trackedNameBudget + nameLength)
        // A mirror is never what makes room, and a new account after the flood is mirrored as before it.
        #expect(catalog.mirror(of: kept) != nil)
        #expect(Self.mirror(Self.name(flood + 1, length: nameLength), in: &catalog))
    }

    /// An account queried through the flood keeps its demand: the accounts forgotten are the less recently queried.
    @Test func anAccountQueriedThroughAFloodKeepsItsDemand() {
        var catalog = MirrorCatalog<Mirror>(RankingMirrorConfiguration(readsBeforeRebuild: 4))
        let regular = Self.name(-7)
        for index in 0..<(MirrorCatalog<Mirror>.trackedAccounts * 2) {
            _ = catalog.mirror(of: Self.name(index))
            if index % 20_000 == 0 { _ = catalog.mirror(of: regular) }
        }
        #expect(catalog.nextToRebuild() == regular)
    }
}
