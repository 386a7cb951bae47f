import ArgumentParser
import Foundation
import Tether
import TetherCLISupport
import TetherCloudProtocol

struct SceneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scene",
        abstract: "Scenes the cloud runs: device, group and delay tasks in order.",
        subcommands: [List.self, Create.self, Show.self, Update.self, Delete.self, Run.self, Status.self]
    )

    static func describe(_ scene: DeviceScene) {
        printLine("\(scene.id)  \(scene.name)\(scene.remark.isEmpty ? "" : "  \"\(scene.remark)\"")")
        for (index, task) in scene.tasks.enumerated() {
            switch task.task {
            case .delay(let seconds):
                printLine("  \(index). wait \(seconds) s")
            case .device(let did, let command):
                let name = task.deviceAlias.isEmpty ? task.productName : task.deviceAlias
                printLine("  \(index). device \(did)\(name.isEmpty ? "" : " (\(name))"): \(describe(command))")
            case .group(let id, let command):
                printLine("  \(index). group \(id)\(task.groupName.isEmpty ? "" : " (\(task.groupName))"): \(describe(command))")
            }
        }
    }

    static func describe(_ command: TetherCloudProtocol.SceneCommand) -> String {
        switch command {
        case .attrs(let attrs): "writes \(JSONValue.object(attrs).serialized())"
        case .raw(let bytes, _): "sends \(bytes.count) bytes"
        }
    }

    static func show(_ scene: DeviceScene, json: Bool) {
        if json { printJSON(scene.json) } else { describe(scene) }
    }

    /// A scene's fields from the command line, read by the same codec the cloud reads.
    struct FieldOptions: ParsableArguments {
        @Argument(help: "The scene's name.") var name: String
        @Option(
            name: .customLong("task"),
            help: ArgumentHelp(
                "A task, in order (repeat): \"device DID NAME=VALUE…\", \"group ID NAME=VALUE…\" or \"delay SECONDS\".",
                discussion: "Values are JSON where they read as JSON (numbers, true/false); enums by index, binary as Base64, as scenes write them."))
        var tasks: [String] = []
        @Option(name: .customLong("tasks-json"), help: "Or: a file holding the tasks as a JSON array (- for standard input).") var tasksJSON: String?
        @Option(help: "A note.") var remark: String?

        func validate() throws {
            if tasks.isEmpty == (tasksJSON == nil) { throw ValidationError("give --task (one or more) or --tasks-json FILE") }
        }

        func fields() throws -> DeviceSceneFields {
            var object: JSONObject = ["scene_name": .string(name)]
            if let remark { object["remark"] = .string(remark) }
            if let tasksJSON {
                let bytes =
                    tasksJSON == "-" ? Array(FileHandle.standardInput.readDataToEndOfFile()) : Array(try Data(contentsOf: URL(fileURLWithPath: tasksJSON)))
                object["tasks"] = try JSONValue.parse(bytes)
            } else {
                object["tasks"] = .array(try tasks.map(Self.task))
            }
            do throws(CloudBodyError) {
                return try DeviceSceneFields(json: .object(object))
            } catch {
                throw ValidationError("\(error.field) \(error.message)")
            }
        }

        static func task(_ text: String) throws -> JSONValue {
            let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            switch (words.first, words.count) {
            case ("delay", 2):
                guard let seconds = Int64(words[1]) else { throw ValidationError("delay SECONDS, not \(text)") }
                return ["task_type": "delay", "time": .int(seconds)]
            case ("device", 3...):
                return ["task_type": "device", "did": .string(words[1]), "attrs": .object(try JSONAssignments.attrs(Array(words.dropFirst(2))))]
            case ("group", 3...):
                return ["task_type": "group", "group_id": .string(words[1]), "attrs": .object(try JSONAssignments.attrs(Array(words.dropFirst(2))))]
            default:
                throw ValidationError("a task is \"device DID NAME=VALUE…\", \"group ID NAME=VALUE…\" or \"delay SECONDS\", not \(text)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your scenes.")
        @OptionGroup var options: CloudClientOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let scenes = try await options.withClient(lanDiscovery: false) { try await $0.scenes.list() }
            if json { return printJSON(.array(scenes.map(\.json))) }
            if scenes.isEmpty { printLine("no scenes") }
            for scene in scenes { SceneCommand.describe(scene) }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a scene.")
        @OptionGroup var options: CloudClientOptions
        @OptionGroup var scene: FieldOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let fields = try scene.fields()
            let created = try await options.withClient(lanDiscovery: false) { try await $0.scenes.create(fields) }
            if json { printJSON(created.json) } else { printLine("scene \(created.id) created") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One of your scenes.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The scene's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = self.id
            SceneCommand.show(try await options.withClient(lanDiscovery: false) { try await $0.scenes.scene(id) }, json: json)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace a scene's name, remark and tasks (a run under way keeps its tasks).")
        @OptionGroup var options: CloudClientOptions
        @Option(help: "The scene's id.") var id: String
        @OptionGroup var scene: FieldOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (id, fields) = (self.id, try scene.fields())
            SceneCommand.show(try await options.withClient(lanDiscovery: false) { try await $0.scenes.update(id, fields) }, json: json)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a scene, its runs (one under way stops) and its schedules.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The scene's id.") var id: String

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.scenes.delete(id) }
            printLine("scene \(id) deleted")
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run a scene: its tasks before the first delay are sent before this returns.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The scene's id.") var id: String
        @Flag(help: "Wait for the run to end, then print how each step went; fails when the run failed.") var wait = false
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (id, wait) = (self.id, self.wait)
            let status = try await options.withClient(lanDiscovery: false) { client in
                let runID = try await client.scenes.run(id)
                var status = try await client.scenes.status(of: id)
                while wait, status.runID == runID, status.status == .running {
                    try await Task.sleep(for: .milliseconds(500))
                    status = try await client.scenes.status(of: id)
                }
                return status
            }
            try Status.report(status, json: json)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "How the scene's latest run went: running, completed, failed or not executed.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The scene's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = self.id
            try Self.report(try await options.withClient(lanDiscovery: false) { try await $0.scenes.status(of: id) }, json: json)
        }

        /// Prints the run; exits 1 when it failed.
        static func report(_ status: DeviceSceneRun, json: Bool) throws {
            if json {
                printJSON(status.json)
            } else {
                let state: String =
                    switch status.status {
                    case .running: "running"
                    case .completed: "completed"
                    case .failed: "failed"
                    case .notExecuted: "not executed"
                    }
                printLine("\(state)\(status.runID.map { "  run \($0)" } ?? "")")
                for step in status.steps {
                    let outcome = step.commandID.map { "command \($0)" } ?? "error \(step.errorCode ?? 0)\(step.message.isEmpty ? "" : " \(step.message)")"
                    printLine("  step \(step.step)\(step.did.isEmpty ? "" : "  \(step.did)")  \(outcome)")
                }
            }
            if status.status == .failed { throw ExitCode(1) }
        }
    }
}
