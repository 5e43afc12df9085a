/// The release every door reports: `suggest --version`, `GET /v1/version` and the OpenAPI document's
/// `info.version` (a test holds the document to it).
public enum Release {
    public static let version = "0.3.4"
}
