public import TetherCloudClient
public import TetherCore

extension TetherClient {
    /// The logged-in user's scenes (the Open API's §2.8).
    public var scenes: DeviceScenes { DeviceScenes(client: self) }
}

/// Scenes, each the user's own: device, group and delay (up to an hour) tasks, run in order by
/// the cloud, which keeps a run going across its own restarts. A scene's values are written as
/// the reference has them: enums by index, binary data points and `raw` as Base64.
///
/// A run goes on after a task that failed (an offline device) and ends `failed`; ``status(of:)``
/// says what each step did. Errors carry the cloud's code (`TetherError.cloudCode`): 9220 a scene
/// that is not yours, 9017 a device you are not bound to, 9517 a group that is not yours, 9015 a
/// mixed group or a bad task, 9025 a value the model refuses.
public struct DeviceScenes: Sendable {
    let client: TetherClient

    public func list() async throws(TetherError) -> [DeviceScene] {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.scenes(session) }
    }

    public func scene(_ id: String) async throws(TetherError) -> DeviceScene {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.scene(session, id: id) }
    }

    public func create(_ fields: DeviceSceneFields) async throws(TetherError) -> DeviceScene {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.createScene(session, fields) }
    }

    public func update(_ id: String, _ fields: DeviceSceneFields) async throws(TetherError) -> DeviceScene {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.updateScene(session, id: id, fields) }
    }

    public func delete(_ id: String) async throws(TetherError) {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.deleteScene(session, id: id) }
    }

    /// Starts a run of the scene: the run's id.
    @discardableResult
    public func run(_ id: String) async throws(TetherError) -> String {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.runScene(session, id: id) }
    }

    /// The scene's latest run: running, completed, failed, or not executed.
    public func status(of id: String) async throws(TetherError) -> DeviceSceneRun {
        try await client.withCloudSession { api, session throws(TetherError) in try await api.sceneRun(session, id: id) }
    }
}
