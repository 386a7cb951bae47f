import ArgumentParser
import Foundation
import Tether
import TetherCLISupport
import TetherCloudProtocol

struct RuleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rule",
        abstract: "Linkage rules the cloud evaluates on your devices' events: when, if, then.",
        subcommands: [List.self, Create.self, Show.self, Update.self, Delete.self, Params.self]
    )

    static func describe(_ rule: LinkageRule) {
        let fields = rule.fields
        let attr = fields.eventAttr.map { " \($0.name) \($0.occurs ? "occurs" : "recovers")" } ?? ""
        let interval = fields.interval > 0 ? ", at most every \(fields.interval) s" : ""
        printLine("\(rule.id)  \(fields.name)  when \(fields.did) \(fields.event.rawValue)\(attr)\(interval)")
        for group in fields.conditions {
            printLine("  if " + group.map { "\($0.left) \($0.op.rawValue) \($0.right)" }.joined(separator: " and "))
        }
        for group in fields.outputs {
            let steps = group.map { step -> String in
                switch step {
                case .delay(let seconds): "wait \(seconds) s"
                case .control(let did, .attrs(let attrs)): "write \(did) \(JSONValue.object(attrs).serialized())"
                case .control(let did, .raw(let bytes)): "send \(did) \(bytes.count) bytes"
                }
            }
            printLine("  then " + steps.joined(separator: ", "))
        }
    }

    /// A rule's fields from the command line (the common shape: one group of conditions, one
    /// output sequence) or from a file of the Open API's JSON, read by the same codec the cloud reads.
    struct FieldOptions: ParsableArguments {
        @Option(name: .customLong("rule-json"), help: "The rule as the Open API's JSON, in a file (- for standard input); no other option then.")
        var ruleJSON: String?
        @Option(help: "The rule's name.") var name: String?
        @Option(help: "The device whose event triggers it.") var did: String?
        @Option(name: .customLong("product-key"), help: "That device's product.") var productKey: String?
        @Option(help: "online, offline, alert, fault or data.") var event: String?
        @Option(help: "The alert or fault (a data point, or a thing-model event).") var attr: String?
        @Flag(help: "Fire when the alert or fault ends (1→0), not when it occurs.") var recovers = false
        @Option(help: "At most once in this many seconds.") var interval: Int64 = 0
        @Option(help: "A device the conditions read, PREFIX=DID@PRODUCT_KEY (repeat).") var input: [String] = []
        @Option(help: "A condition, \"PREFIX.NAME OP VALUE\" ('text' for a string; repeat: all must hold).") var when: [String] = []
        @Option(help: "A step, in order: \"device DID NAME=VALUE…\" or \"delay SECONDS\" (repeat).") var then: [String] = []
        @Option(help: "A note.") var remark: String?

        func fields() throws -> LinkageRuleFields {
            let json: JSONValue
            if let ruleJSON {
                let bytes =
                    ruleJSON == "-" ? Array(FileHandle.standardInput.readDataToEndOfFile()) : Array(try Data(contentsOf: URL(fileURLWithPath: ruleJSON)))
                json = try JSONValue.parse(bytes)
            } else {
                guard let name, let did, let productKey, let event else {
                    throw ValidationError("give --name, --did, --product-key and --event (or --rule-json)")
                }
                var object: JSONObject = [
                    "name": .string(name), "did": .string(did), "product_key": .string(productKey), "event": .string(event), "interval": .int(interval),
                ]
                if let attr { object["event_attr"] = ["attr_name": .string(attr), "value": recovers ? "0" : "1"] }
                if let remark { object["remark"] = .string(remark) }
                object["input"] = .array(
                    try input.map { text in
                        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
                        let device = parts.count == 2 ? parts[1].split(separator: "@", maxSplits: 1).map(String.init) : []
                        guard device.count == 2 else { throw ValidationError("--input is PREFIX=DID@PRODUCT_KEY, not \(text)") }
                        return ["prefix": .string(parts[0]), "did": .string(device[0]), "product_key": .string(device[1])]
                    })
                if !when.isEmpty {
                    object["condition"] = .array([
                        .array(
                            try when.map { text in
                                let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                                guard words.count == 3 else { throw ValidationError("--when is \"LEFT OP RIGHT\", not \(text)") }
                                return ["left": .string(words[0]), "opt": .string(words[1]), "right": .string(words[2])]
                            })
                    ])
                }
                object["output"] = .array([.array(try then.map(Self.step))])
                json = .object(object)
            }
            do throws(CloudBodyError) {
                return try LinkageRuleFields(json: json)
            } catch {
                throw ValidationError("\(error.field) \(error.message)")
            }
        }

        static func step(_ text: String) throws -> JSONValue {
            let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            switch (words.first, words.count) {
            case ("delay", 2):
                guard let seconds = Int64(words[1]) else { throw ValidationError("delay SECONDS, not \(text)") }
                return ["type": "delay", "delay": .int(seconds)]
            case ("device", 3...):
                return ["type": "devctrl", "did": .string(words[1]), "attrs": .object(try JSONAssignments.attrs(Array(words.dropFirst(2))))]
            default:
                throw ValidationError("a step is \"device DID NAME=VALUE…\" or \"delay SECONDS\", not \(text)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your rules.")
        @OptionGroup var options: CloudClientOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let rules = try await options.withClient(lanDiscovery: false) { try await $0.rules.list() }
            if json { return printJSON(.array(rules.map(\.json))) }
            if rules.isEmpty { printLine("no rules") }
            for rule in rules { RuleCommand.describe(rule) }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a rule.")
        @OptionGroup var options: CloudClientOptions
        @OptionGroup var rule: FieldOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let fields = try rule.fields()
            let created = try await options.withClient(lanDiscovery: false) { try await $0.rules.create(fields) }
            if json { printJSON(created.json) } else { printLine("rule \(created.id) created") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One of your rules.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The rule's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = self.id
            let rule = try await options.withClient(lanDiscovery: false) { try await $0.rules.rule(id) }
            if json { printJSON(rule.json) } else { RuleCommand.describe(rule) }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace a rule's fields.")
        @OptionGroup var options: CloudClientOptions
        @Option(help: "The rule's id.") var id: String
        @OptionGroup var rule: FieldOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (id, fields) = (self.id, try rule.fields())
            let updated = try await options.withClient(lanDiscovery: false) { try await $0.rules.update(id, fields) }
            if json { printJSON(updated.json) } else { RuleCommand.describe(updated) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a rule (a run it started goes on).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The rule's id.") var id: String

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.rules.delete(id) }
            printLine("rule \(id) deleted")
        }
    }

    struct Params: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The data points rules may use, per product (default: your devices' products).")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "Product keys.") var productKeys: [String] = []
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let keys = productKeys
            let params = try await options.withClient(lanDiscovery: false) { try await $0.rules.params(productKeys: keys) }
            if json {
                var object = JSONObject()
                for (key, list) in params { object[key] = .array(list.map(\.json)) }
                return printJSON(.object(object))
            }
            for key in params.keys.sorted() {
                printLine(key)
                for param in params[key]! {
                    printLine("  \(param.name)  \(param.type)\(param.labels.isEmpty ? "" : " (\(param.labels.joined(separator: ", ")))")  \(param.displayName)")
                }
            }
        }
    }
}
