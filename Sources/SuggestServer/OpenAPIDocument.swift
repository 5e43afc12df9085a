/// The OpenAPI 3.1 document of the API, `Resources/openapi.json`, embedded in the binary by the EmbedResources
/// plugin so that `/v1/openapi.json` serves the file in the repository, byte for byte, wherever the binary runs.
enum OpenAPIDocument {
    static let bytes = Array(EmbeddedResources.openapi.utf8)
}
