import PackagePlugin

/// Embeds a target's `Resources/*.json` documents in its code, as byte arrays of an enum named after each file
/// (`openapi.json` becomes `EmbeddedResources.openapi`): the server serves its OpenAPI document from the binary,
/// whatever directory the binary is installed in, and the document has one source, the file.
@main
struct EmbedResources: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let resources = target.directoryURL.appending(path: "Resources")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedResources.swift")
        let inputs = (try? FileManager.default.contentsOfDirectory(atPath: resources.path())) ?? []
        let files = inputs.filter { $0.hasSuffix(".json") }.sorted().map { resources.appending(path: $0) }
        return [
            .buildCommand(
                displayName: "Embedding \(files.map(\.lastPathComponent).joined(separator: ", ")) in \(target.name)",
                executable: try context.tool(named: "ResourceEmbedder").url,
                arguments: [output.path()] + files.map { $0.path() }, inputFiles: files, outputFiles: [output])
        ]
    }
}

import Foundation
