/// An account as a tenant names it, and the name it has in the store.
///
/// Tenants are walls: every tenant's accounts live under its own prefix in the store (`acme:alice`), a prefix no
/// request can name, so that account `alice` of one tenant and `alice` of another are two histories that never
/// mix. A server without keys serves one tenant with no prefix: its accounts are the command line's.
struct TenantAccount: Sendable, Equatable {
    /// `nil` for a server without keys.
    var tenant: String?
    /// The account as the request names it.
    var account: String

    /// The account's name in the store.
    var storeAccount: String { tenant.map { $0 + ":" + account } ?? account }
}
