// swift-tools-version:6.2
import PackageDescription

// Warnings are errors in every target: a warning today is a bug report tomorrow.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

// `suggest` is one static executable on Linux (the Swift runtime and SQLite linked in): nothing to load or relocate
// at start, which is most of what a 2 ms `suggest list` costs. Apple's platforms have no static executables.
let staticExecutable: [LinkerSetting] = [.unsafeFlags(["-static-executable"], .when(platforms: [.linux]))]

// The embedded store's privacy manifest (it calls stat() on its own files) ships in Apple builds. A resource would
// make SwiftPM generate a Foundation-based bundle accessor on Linux, a cost at every start for a file only Apple's
// tools read, so elsewhere it is left out.
#if os(macOS)
    let privacyManifest: (resources: [Resource], exclude: [String]) = ([.copy("PrivacyInfo.xcprivacy")], [])
#else
    let privacyManifest: (resources: [Resource], exclude: [String]) = ([], ["PrivacyInfo.xcprivacy"])
#endif

let package = Package(
    name: "suggest",
    // The floor is set by `Synchronization.Mutex`, which the library's thread-safe types use: iOS 18 and macOS 15
    // (September 2024). The share-sheet suggestions the library feeds exist since iOS 13; an app that must run on
    // older systems keeps the engine behind its own lock instead.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SuggestCore", targets: ["SuggestCore"]),
        .library(name: "SuggestShare", targets: ["SuggestShare"]),
        .library(name: "SuggestSQLiteStore", targets: ["SuggestSQLiteStore"]),
        .library(name: "SuggestEval", targets: ["SuggestEval"]),
        .library(name: "SuggestCLI", targets: ["SuggestCLI"]),
        .library(name: "Suggest", targets: ["Suggest"]),
        .library(name: "RedisCluster", targets: ["RedisCluster"]),
        .library(name: "SuggestRedisStore", targets: ["SuggestRedisStore"]),
        .executable(name: "suggest", targets: ["suggest"]),
        .executable(name: "suggest-serve", targets: ["suggest-serve"]),
        .executable(name: "suggest-bench", targets: ["SuggestBench"]),
        .executable(name: "http-probe", targets: ["HTTPProbe"]),
    ],
    targets: [
        // C libraries. None takes flags from pkg-config: on a Mac that would pull in Homebrew's copies, while an
        // Apple build must link the SDK's SQLite (as GRDB does). On Debian the headers are in /usr/include.
        .systemLibrary(name: "CSystem"),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // GNU libmicrohttpd, linked dynamically: its static archive needs GnuTLS, so nothing that the static `suggest`
        // executable links may depend on it (only HTTPServer, its tests and the executables that serve HTTP).
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),

        // The engine: the domain model, JSON, time, the ranking core and the storage seam. No SQLite, no
        // printing, no Foundation.
        .target(name: "SuggestCore", dependencies: ["CSystem"], swiftSettings: strict),
        // Activation rules (dictionary and predicate forms), property lists, share requests and the share flow.
        .target(name: "SuggestShare", dependencies: ["SuggestCore", "CSystem"], swiftSettings: strict),
        // The embedded store: the donation log and its ranking state in SQLite.
        .target(
            name: "SuggestSQLiteStore", dependencies: ["SuggestCore", "CSQLite", "CSystem", "SystemThread"],
            exclude: privacyManifest.exclude, resources: privacyManifest.resources, swiftSettings: strict),
        // What an app imports: `SuggestionService`, the engine behind an async, Sendable face, on the embedded store.
        .target(
            name: "Suggest", dependencies: ["SuggestCore", "SuggestShare", "SuggestSQLiteStore"], swiftSettings: strict),
        // Replay evaluation, the anchor policies and converters from public message histories.
        .target(name: "SuggestEval", dependencies: ["SuggestCore", "CSystem"], swiftSettings: strict),
        // A Redis Cluster client on hiredis: slot routing, redirections, failover, pipelines and scripts. No
        // Foundation; shared by every thread of a server.
        .target(
            name: "RedisCluster", dependencies: ["CHiredis", "CSystem", "SystemThread"], swiftSettings: strict),
        // The store on a Redis Cluster: the same ranking and export as the embedded store, partitioned by account.
        .target(
            name: "SuggestRedisStore", dependencies: ["SuggestCore", "RedisCluster", "CSystem"], swiftSettings: strict),
        // The command line: one file per subcommand; the executable below only calls it.
        .target(
            name: "SuggestCLI",
            dependencies: [
                "SuggestCore", "SuggestSQLiteStore", "SuggestRedisStore", "RedisCluster", "SuggestShare", "SuggestEval",
                "CSystem", "SystemThread",
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "suggest", dependencies: ["SuggestCLI", "CSystem"], swiftSettings: strict,
            linkerSettings: staticExecutable),

        // A generic HTTP/1.1 server on libmicrohttpd: requests in, responses out, limits, graceful stop, signals. It
        // knows nothing of suggest's API.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CSystem", "SystemThread"], swiftSettings: strict),

        // A thread of the system's own, for work that must not wait on libdispatch for one; and a semaphore whose
        // timed wait no change of the date moves.
        .target(name: "SystemThread", dependencies: ["CSystem"], swiftSettings: strict),

        // The HTTP API of `suggest serve`: routes, tenants and keys, metrics, the OpenAPI document.
        .target(
            name: "SuggestServer",
            dependencies: ["SuggestCore", "SuggestShare", "HTTPServer", "CSystem", "SystemThread"],
            exclude: ["Resources"], swiftSettings: strict, plugins: ["EmbedResources"]),
        // The server's executable, which `suggest serve` runs: linked dynamically (libmicrohttpd needs gnutls), with
        // the Swift runtime linked in so that it runs without the toolchain installed.
        .executableTarget(
            name: "suggest-serve", dependencies: ["SuggestCLI", "SuggestServer", "HTTPServer", "CSystem"],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))]),
        .plugin(name: "EmbedResources", capability: .buildTool(), dependencies: ["ResourceEmbedder"]),
        .executableTarget(name: "ResourceEmbedder", path: "Plugins/ResourceEmbedder"),

        .executableTarget(
            name: "SuggestBench", dependencies: ["SuggestCore", "SuggestSQLiteStore", "SuggestEval", "CSystem"],
            path: "Benchmarks/SuggestBench", swiftSettings: strict),

        // A trivial server on HTTPServer: for wrk, perf, and the tests that need a process of its own (signals).
        .executableTarget(
            name: "HTTPProbe", dependencies: ["HTTPServer", "CSystem"], path: "Benchmarks/HTTPProbe",
            swiftSettings: strict),

        // What several test targets share (a seeded generator, temporary directories, the built `suggest` run as a
        // child process); not a product.
        .target(name: "SuggestTestSupport", path: "Tests/SuggestTestSupport", swiftSettings: strict),
        .testTarget(name: "SuggestCoreTests", dependencies: ["SuggestCore", "SuggestTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "SuggestSQLiteStoreTests", dependencies: ["SuggestSQLiteStore", "SuggestTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "SuggestShareTests", dependencies: ["SuggestShare", "SuggestTestSupport"], swiftSettings: strict),
        .testTarget(name: "SuggestEvalTests", dependencies: ["SuggestEval", "SuggestTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "SuggestCLITests", dependencies: ["SuggestCLI", "SuggestSQLiteStore", "SuggestTestSupport"],
            swiftSettings: strict),
        .testTarget(name: "SuggestTests", dependencies: ["Suggest", "SuggestTestSupport", "CSystem"], swiftSettings: strict),
        // Every store against the in-memory reference, operation by operation.
        .testTarget(
            name: "DonationStoreConformanceTests",
            dependencies: [
                "SuggestCore", "SuggestSQLiteStore", "SuggestRedisStore", "RedisCluster", "SuggestTestSupport",
            ],
            swiftSettings: strict),
        // The Redis store's faults on a real local cluster: failover, resharding, deletion from the nodes' files.
        .testTarget(
            name: "SuggestRedisStoreTests",
            dependencies: ["SuggestCore", "SuggestRedisStore", "RedisCluster", "SuggestTestSupport"], swiftSettings: strict),
        // `suggest serve` end to end: the built binaries, real HTTP over loopback, a real store.
        .testTarget(
            name: "SuggestServerTests", dependencies: ["SuggestCore", "SuggestServer", "SuggestTestSupport", "CSystem"],
            swiftSettings: strict),
        .testTarget(
            name: "HTTPServerTests", dependencies: ["HTTPServer", "SuggestTestSupport", "CSystem", "SystemThread"],
            swiftSettings: strict),
        // The Redis client against real local servers and clusters that the tests start (redis-server must be
        // installed).
        .testTarget(
            name: "RedisClusterTests", dependencies: ["RedisCluster", "SuggestTestSupport"], swiftSettings: strict),
        // Faults, concurrency, kills and hostile input, run against the built `suggest` binary.
        .testTarget(
            name: "SuggestRobustnessTests",
            dependencies: ["SuggestCLI", "SuggestSQLiteStore", "SuggestTestSupport", "CSystem"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
