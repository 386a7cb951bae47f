import NIOHTTP1
public import TetherCloudProtocol
public import TetherCore

/// A scene: device, group and delay tasks run in order (named so as not to meet SwiftUI's `Scene`).
public typealias DeviceScene = SceneBody
/// A scene's name, remark and tasks, as written.
public typealias DeviceSceneFields = SceneFieldsBody
/// One task of a scene.
public typealias DeviceSceneTask = SceneTaskBody
/// Where a scene's latest run is, with each step's outcome.
public typealias DeviceSceneRun = SceneRunBody

extension TetherCloudAPI {
    // MARK: Scenes (reference §2.8)

    public func scenes(_ session: CloudSession) async throws(TetherError) -> [DeviceScene] {
        let answer = try await call(.GET, "/app/scene", session: session)
        return try (answer.arrayValue ?? []).map { entry throws(TetherError) in try decodeBody("a scene", entry, as: SceneBody.init(json:)) }
    }

    public func scene(_ session: CloudSession, id: String) async throws(TetherError) -> DeviceScene {
        try decodeBody("the scene", try await call(.GET, "/app/scene/\(id.tetherPercentEncoded)", session: session), as: SceneBody.init(json:))
    }

    public func createScene(_ session: CloudSession, _ fields: DeviceSceneFields) async throws(TetherError) -> DeviceScene {
        try decodeBody("the scene", try await call(.POST, "/app/scene", body: fields.json, session: session), as: SceneBody.init(json:))
    }

    public func updateScene(_ session: CloudSession, id: String, _ fields: DeviceSceneFields) async throws(TetherError) -> DeviceScene {
        let answer = try await call(.PUT, "/app/scene/\(id.tetherPercentEncoded)", body: fields.json, session: session)
        return try decodeBody("the scene", answer, as: SceneBody.init(json:))
    }

    public func deleteScene(_ session: CloudSession, id: String) async throws(TetherError) {
        _ = try await call(.DELETE, "/app/scene/\(id.tetherPercentEncoded)", session: session)
    }

    /// Runs the scene; its tasks before the first delay have been sent when this returns. The
    /// run's id.
    public func runScene(_ session: CloudSession, id: String) async throws(TetherError) -> String {
        let answer = try await call(.POST, "/app/scene/\(id.tetherPercentEncoded)/task", session: session)
        return try decodeBody("the run", answer, as: SceneStartBody.init(json:)).runID
    }

    public func sceneRun(_ session: CloudSession, id: String) async throws(TetherError) -> DeviceSceneRun {
        try decodeBody("the scene's run", try await call(.GET, "/app/scene/\(id.tetherPercentEncoded)/task", session: session), as: SceneRunBody.init(json:))
    }
}
