import TetherCloudProtocol
import TetherCore

/// Scenes (reference §2.8): each a user's own and seen by no one else (9220 for anyone else's).
/// A scene's tasks are checked when written as an app's write would be (the user may control
/// each device, the group is the user's and of one product, the values fit the model: 9017,
/// 9517, 9015, 9025) and again at every step of a run, by `AutomationRunner`.
///
/// Running a scene starts a durable run: the steps before its first delay are taken before the
/// answer, the rest when their time comes, on whichever node looks first.
struct SceneService: Sendable {
    let database: any SQLDatabase
    let catalogue: DeviceCatalogue
    let runner: AutomationRunner
    let clock: any WallClock

    static let maximumScenes = 100

    func create(_ user: AuthenticatedUser, _ fields: SceneFieldsBody) async throws -> SceneBody {
        try await check(user, fields)
        let id = "se_" + Secrets.hex(bytes: 10)
        let now = clock.nowMs() / 1000
        try await database.transaction { transaction in
            let store = SceneStore(transaction)
            guard try await store.count(uid: user.uid) < Self.maximumScenes else {
                throw CloudAPIError.formInvalid(detail: "a user has at most \(Self.maximumScenes) scenes")
            }
            try await store.insert(id: id, uid: user.uid, fields, now: now)
        }
        return try await scene(user, id: id)
    }

    func update(_ user: AuthenticatedUser, id: String, _ fields: SceneFieldsBody) async throws -> SceneBody {
        _ = try await find(user, id: id)
        try await check(user, fields)
        guard try await SceneStore(database).update(id: id, uid: user.uid, fields, now: clock.nowMs() / 1000) else {
            throw CloudAPIError.sceneNotFound(detail: "no scene \(id) of yours")
        }
        return try await scene(user, id: id)
    }

    func list(_ user: AuthenticatedUser) async throws -> [SceneBody] {
        var scenes: [SceneBody] = []
        for scene in try await SceneStore(database).list(uid: user.uid) { scenes.append(try await described(scene, uid: user.uid)) }
        return scenes
    }

    func scene(_ user: AuthenticatedUser, id: String) async throws -> SceneBody {
        try await described(try await find(user, id: id), uid: user.uid)
    }

    /// Deletes the scene with its runs (one under way stops) and the schedules that start it.
    func delete(_ user: AuthenticatedUser, id: String) async throws {
        let deleted = try await database.transaction { transaction in try await SceneStore(transaction).delete(id: id, uid: user.uid) }
        guard deleted else { throw CloudAPIError.sceneNotFound(detail: "no scene \(id) of yours") }
    }

    /// Runs the scene: its steps up to the first delay are taken before this returns.
    func start(_ user: AuthenticatedUser, id: String) async throws -> SceneStartBody {
        let now = clock.nowMs()
        let runID = try await database.transaction { transaction in
            guard let scene = try await SceneStore(transaction).find(id: id, uid: user.uid) else {
                throw CloudAPIError.sceneNotFound(detail: "no scene \(id) of yours")
            }
            guard
                let runID = try await AutomationRunner.start(
                    uid: user.uid, appID: user.appID, sceneID: id, source: .scene, lanes: [scene.tasks], stopOnFailure: false, nowMs: now,
                    on: transaction)
            else { throw CloudAPIError.formInvalid(detail: "at most \(AutomationRunner.maximumRunning) of your scenes run at once") }
            return runID
        }
        try await runner.advanceDue(runID: runID)
        return SceneStartBody(runID: runID)
    }

    /// The scene's latest run: not executed when it never ran (or its run was forgotten).
    func status(_ user: AuthenticatedUser, id: String) async throws -> SceneRunBody {
        _ = try await find(user, id: id)
        let store = AutomationRunStore(database)
        guard let run = try await store.latest(sceneID: id) else { return SceneRunBody(status: .notExecuted) }
        let status: SceneRunBody.Status =
            switch run.state {
            case .running: .running
            case .completed: .completed
            case .failed: .failed
            }
        return SceneRunBody(status: status, runID: run.id, startedAt: run.startedMs, finishedAt: run.finishedMs, steps: try await store.steps(runID: run.id))
    }

    private func find(_ user: AuthenticatedUser, id: String) async throws -> SceneBody {
        guard id.utf8.count <= 64, let scene = try await SceneStore(database).find(id: id, uid: user.uid) else {
            throw CloudAPIError.sceneNotFound(detail: "no scene \(id) of yours")
        }
        return scene
    }

    /// Each task as an app's write of it would be checked.
    private func check(_ user: AuthenticatedUser, _ fields: SceneFieldsBody) async throws {
        for task in fields.tasks {
            switch task.task {
            case .delay:
                continue
            case .device(let did, let command):
                let device = try await DeviceAccess(database: database).controllable(by: user, did: did)
                let model = try await catalogue.model(device.productKey)
                _ = try ControlService.command(try AutomationControl.request(.scene(command), model: model), model: model)
            case .group(let id, let command):
                guard let group = try await GroupStore(database).find(id: id, uid: user.uid) else {
                    throw CloudAPIError.groupNotFound(detail: "no group \(id) of yours")
                }
                guard group.isSingleProduct else { throw CloudAPIError.formInvalid(detail: "group \(id) is mixed: a scene writes to single-product groups") }
                let model = try await catalogue.model(group.productKey)
                _ = try ControlService.command(try AutomationControl.request(.scene(command), model: model), model: model)
            }
        }
    }

    /// The scene as the user sees its tasks' devices and groups now.
    private func described(_ scene: SceneBody, uid: String) async throws -> SceneBody {
        var scene = scene
        let scenes = SceneStore(database)
        let groups = GroupStore(database)
        for index in scene.tasks.indices {
            switch scene.tasks[index].task {
            case .delay:
                continue
            case .device(let did, _):
                if let device = try await scenes.deviceDescription(did: did, uid: uid) {
                    scene.tasks[index].productKey = device.productKey
                    scene.tasks[index].productName = device.productName
                    scene.tasks[index].deviceAlias = device.alias
                    scene.tasks[index].deviceRemark = device.remark
                }
            case .group(let id, _):
                if let group = try await groups.find(id: id, uid: uid) {
                    scene.tasks[index].groupName = group.name
                    scene.tasks[index].productKey = group.productKey
                    scene.tasks[index].productName = group.productName
                }
            }
        }
        return scene
    }
}
