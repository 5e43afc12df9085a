// swift-tools-version:6.2
import PackageDescription

// The fuzz targets of suggest, kept out of the main package so that its build stays free of sanitizer flags.
// Build and run them with scripts/fuzz.sh (swift build -Xswiftc -sanitize=fuzzer,address ...).
//
// FuzzHarness holds the checks each target makes; the robustness tests compile the same files
// (Tests/SuggestRobustnessTests/FuzzHarness is a symlink to it) to replay the committed corpus.
let package = Package(
    name: "suggest-fuzz",
    dependencies: [.package(name: "suggest", path: "..")],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(
            name: "FuzzHarness",
            dependencies: [
                .product(name: "SuggestCLI", package: "suggest"), .product(name: "SuggestCore", package: "suggest"),
                .product(name: "SuggestSQLiteStore", package: "suggest"),
            ]),
        .target(
            name: "FuzzShareHarness",
            dependencies: [
                .product(name: "SuggestCore", package: "suggest"), .product(name: "SuggestShare", package: "suggest"),
            ]),
        .executableTarget(name: "FuzzDonationJSON", dependencies: ["CLibFuzzer", "FuzzHarness"]),
        .executableTarget(name: "FuzzCommandLine", dependencies: ["CLibFuzzer", "FuzzHarness"]),
        .executableTarget(name: "FuzzActivationPredicate", dependencies: ["CLibFuzzer", "FuzzShareHarness"]),
        .executableTarget(name: "FuzzPropertyList", dependencies: ["CLibFuzzer", "FuzzShareHarness"]),
    ],
    swiftLanguageModes: [.v6]
)
