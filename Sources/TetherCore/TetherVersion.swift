/// The version of this Tether release, from this one place: `tether --version`,
/// `tether-agent --version`, `tether-cloud --version`, the cloud's `GET /status` and its OpenAPI
/// document, and the SDK's `User-Agent` all report it. Changed with each entry of CHANGELOG.md.
public enum TetherVersion {
    /// Semantic version; `-dev` until the release is tagged.
    public static let current = "0.5.0-dev"
}
