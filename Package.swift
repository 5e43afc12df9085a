// swift-tools-version:6.2
import PackageDescription

// Warnings are errors in every target: a warning today is a bug report tomorrow.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

// `suggest` is one static executable on Linux (the Swift runtime and SQLite linked in): nothing to load or relocate
// at start, which is most of what a 2 ms `suggest list` costs. Apple's platforms have no static executables.
let staticExecutable: [LinkerSetting] = [.unsafeFlags(["-static-executable"], .when(platforms: [.linux]))]

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
        .library(name: "RedisCluster", targets: ["RedisCluster"]),
        .executable(name: "suggest", targets: ["suggest"]),
        .executable(name: "suggest-bench", targets: ["SuggestBench"]),
    ],
    targets: [
        // C libraries. None takes flags from pkg-config: on a Mac that would pull in Homebrew's copies, while an
        // Apple build must link the SDK's SQLite (as GRDB does). On Debian the headers are in /usr/include.
        .systemLibrary(name: "CSystem"),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),

        // The engine: the domain model, JSON, time, the ranking core and the storage seam. No SQLite, no
        // printing, no Foundation.
        .target(name: "SuggestCore", dependencies: ["CSystem"], swiftSettings: strict),
        // Activation rules (dictionary and predicate forms), property lists, share requests and the share flow.
        .target(name: "SuggestShare", dependencies: ["SuggestCore", "CSystem"], swiftSettings: strict),
        // The embedded store: the donation log and its ranking state in SQLite.
        .target(
            name: "SuggestSQLiteStore", dependencies: ["SuggestCore", "CSQLite", "CSystem"], swiftSettings: strict),
        // Replay evaluation, the anchor policies and converters from public message histories.
        .target(name: "SuggestEval", dependencies: ["SuggestCore", "CSystem"], swiftSettings: strict),
        // A Redis Cluster client on hiredis: slot routing, redirections, failover, pipelines and scripts. No
        // Foundation; shared by every thread of a server.
        .target(
            name: "RedisCluster", dependencies: ["CHiredis", "CSystem"], swiftSettings: strict),
        // The command line: one file per subcommand; the executable below only calls it.
        .target(
            name: "SuggestCLI",
            dependencies: ["SuggestCore", "SuggestSQLiteStore", "SuggestShare", "SuggestEval", "CSystem"],
            swiftSettings: strict),
        .executableTarget(
            name: "suggest", dependencies: ["SuggestCLI", "CSystem"], swiftSettings: strict,
            linkerSettings: staticExecutable),

        .executableTarget(
            name: "SuggestBench", dependencies: ["SuggestCore", "SuggestSQLiteStore", "SuggestEval", "CSystem"],
            path: "Benchmarks/SuggestBench", swiftSettings: strict),

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
