// swift-tools-version:6.2
import PackageDescription

// Warnings are errors in every target: a warning today is a bug report tomorrow.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "suggest",
    products: [
        .library(name: "SuggestCore", targets: ["SuggestCore"]),
        .library(name: "SuggestStore", targets: ["SuggestStore"]),
        .library(name: "SuggestShare", targets: ["SuggestShare"]),
        .library(name: "SuggestEval", targets: ["SuggestEval"]),
        .executable(name: "suggest", targets: ["suggest"]),
        .executable(name: "suggest-bench", targets: ["SuggestBench"]),
    ],
    targets: [
        // SQLite from Debian's libsqlite3-dev; nothing else comes from outside the toolchain.
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),

        // The domain model, JSON, time and the ranking core. No SQLite, no printing, no Foundation.
        .target(name: "SuggestCore", swiftSettings: strict),
        // The durable donation log: SQLite, migrations, incremental ranking state.
        .target(name: "SuggestStore", dependencies: ["SuggestCore", "CSQLite"], swiftSettings: strict),
        // Activation rules (dictionary and predicate forms), property lists, share requests.
        .target(name: "SuggestShare", dependencies: ["SuggestCore"], swiftSettings: strict),
        // Replay evaluation, the anchor policies and converters from public message histories.
        .target(name: "SuggestEval", dependencies: ["SuggestCore"], swiftSettings: strict),
        // The command line: one file per subcommand; the executable below only calls it.
        .target(
            name: "SuggestCLI",
            dependencies: ["SuggestCore", "SuggestStore", "SuggestShare", "SuggestEval"],
            swiftSettings: strict),
        .executableTarget(name: "suggest", dependencies: ["SuggestCLI"], swiftSettings: strict),

        .executableTarget(
            name: "SuggestBench", dependencies: ["SuggestCore", "SuggestStore", "SuggestEval"],
            path: "Benchmarks/SuggestBench", swiftSettings: strict),

        // What several test targets share (a seeded generator, temporary directories, the built `suggest` run as a
        // child process); not a product.
        .target(name: "SuggestTestSupport", path: "Tests/SuggestTestSupport", swiftSettings: strict),
        .testTarget(name: "SuggestCoreTests", dependencies: ["SuggestCore", "SuggestTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "SuggestStoreTests", dependencies: ["SuggestStore", "SuggestTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "SuggestShareTests", dependencies: ["SuggestShare", "SuggestTestSupport"], swiftSettings: strict),
        .testTarget(name: "SuggestEvalTests", dependencies: ["SuggestEval", "SuggestTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "SuggestCLITests", dependencies: ["SuggestCLI", "SuggestStore", "SuggestTestSupport"],
            swiftSettings: strict),
        // Faults, concurrency, kills and hostile input, run against the built `suggest` binary.
        .testTarget(
            name: "SuggestRobustnessTests", dependencies: ["SuggestCLI", "SuggestStore", "SuggestTestSupport"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
