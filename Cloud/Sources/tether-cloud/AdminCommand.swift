import ArgumentParser
import Foundation
import Logging
import TetherAlink
import TetherCloud
import TetherCloudProtocol
import TetherCore

struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Create apps, products and devices; disable accounts; read the outbox.",
        subcommands: [AppGroup.self, ProductGroup.self, DeviceGroup.self, FirmwareGroup.self, ForwardGroup.self, UserGroup.self, OutboxCommand.self]
    )

    struct AppGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "app", subcommands: [Create.self, Configure.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Register an app; prints its appId and appSecret.")
            @Option var name: String
            @OptionGroup var thirdParty: ThirdPartyOptions
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let app = try await options.withAdministration { admin in
                    let app = try await admin.createApp(name: name)
                    if let issuer = thirdParty.thirdPartyIssuer {
                        try await admin.configureThirdParty(appID: app.appID, issuer: issuer)
                    }
                    return app
                }
                options.print(
                    json: ["appId": .string(app.appID), "appSecret": .string(app.appSecret)],
                    text: "appId: \(app.appID)\nappSecret: \(app.appSecret)"
                )
            }
        }

        struct Configure: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Turn third-party login (ID tokens verified against a JWKS) on or off for an app."
            )
            @Option(help: "The app id.") var app: String
            @OptionGroup var thirdParty: ThirdPartyOptions
            @Flag(help: "Turn third-party login off.") var disableThirdParty = false
            @OptionGroup var options: AdminOptions

            func validate() throws {
                guard (thirdParty.thirdPartyIssuer == nil) == disableThirdParty else {
                    throw ValidationError("give either --jwks-url URL or --disable-third-party")
                }
            }

            func run() async throws {
                try await options.withAdministration { try await $0.configureThirdParty(appID: app, issuer: thirdParty.thirdPartyIssuer) }
                options.print(json: ["appId": .string(app), "thirdParty": .bool(!disableThirdParty)], text: "updated \(app)")
            }
        }
    }

    struct ForwardGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forward", abstract: "Server-side subscribers: push a product's device messages to an HTTP endpoint.",
            subcommands: [Add.self, List.self, Remove.self, Messages.self])

        static func json(_ record: ForwarderRecord, secret: Bool) -> JSONValue {
            var object: JSONObject = [
                "id": .int(record.id), "productKey": .string(record.productKey), "url": .string(record.url),
                "kinds": .array(record.kinds.map(\.rawValue).sorted().map(JSONValue.string)),
            ]
            if secret { object["secret"] = .string(record.secret) }
            return .object(object)
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "POST the product's device messages to URL, signed (X-Tether-Signature: sha256=HMAC of the body with the printed secret).")
            @Option(help: "The product key.") var product: String
            @Option(help: "Where to POST (http or https).") var url: String
            @Option(name: .customLong("kind"), help: "What to forward (repeat): property, event, user, presence. Default: all.") var kinds: [String] = []
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let kinds =
                    kinds.isEmpty
                    ? Set(ForwardKind.allCases)
                    : Set(
                        try kinds.map { name in
                            guard let kind = ForwardKind(rawValue: name) else { throw ValidationError("--kind is property, event, user or presence") }
                            return kind
                        })
                let record = try await options.withAdministration { try await $0.addForwarder(productKey: product, url: url, kinds: kinds) }
                options.print(json: ForwardGroup.json(record, secret: true), text: "forwarder \(record.id) → \(record.url)\nsecret \(record.secret)")
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "The forwarders (of one product).")
            @Option(help: "The product key.") var product: String?
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let records = try await options.withAdministration { try await $0.forwarders(productKey: product) }
                let text = records.map { "\($0.id)  \($0.productKey)  \($0.url)  \($0.kinds.map(\.rawValue).sorted().joined(separator: ","))" }
                options.print(
                    json: .array(records.map { ForwardGroup.json($0, secret: false) }), text: text.isEmpty ? "no forwarders" : text.joined(separator: "\n"))
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove a forwarder and its undelivered messages.")
            @Option(help: "The forwarder's id.") var id: Int64
            @OptionGroup var options: AdminOptions

            func run() async throws {
                try await options.withAdministration { try await $0.removeForwarder(id: id) }
                options.print(json: ["removed": .int(id)], text: "removed forwarder \(id)")
            }
        }

        struct Messages: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A forwarder's messages, newest first: pending, delivered or failed.")
            @Option(help: "The forwarder's id.") var id: Int64
            @Option(help: "How many.") var limit = 50
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let entries = try await options.withAdministration { try await $0.forwardedMessages(forwarderID: id, limit: limit) }
                options.print(
                    json: .array(
                        entries.map { ["id": .int($0.id), "state": .string($0.state), "attempts": .int($0.attempts), "lastError": .string($0.lastError)] }),
                    text: entries.map { "\($0.id)  \($0.state)  \($0.attempts) attempts  \($0.lastError)" }.joined(separator: "\n"))
            }
        }
    }

    struct FirmwareGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "firmware", abstract: "OTA firmware packages: add, list, signed download URLs, and upgrade jobs.",
            subcommands: [Add.self, List.self, URLCommand.self, Upgrade.self, Job.self])

        static func json(_ record: FirmwareRecord) -> JSONValue {
            [
                "id": .int(record.id), "productKey": .string(record.productKey), "module": .string(record.module), "version": .string(record.version),
                "size": .int(record.size), "sha256": .string(record.sha256), "md5": .string(record.md5), "createdAt": .int(record.createdAt),
            ]
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Store a package (its size, SHA-256 and MD5 are computed).")
            @Option(help: "The product key.") var product: String
            @Option(help: "The firmware version.") var version: String
            @Option(help: "The device's module it is for.") var module = "default"
            @Option(help: "The package file.") var file: String
            @OptionGroup var options: AdminOptions

            func run() async throws {
                guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
                let record = try await options.withAdministration {
                    try await $0.addFirmware(productKey: product, module: module, version: version, bytes: Array(data))
                }
                options.print(
                    json: FirmwareGroup.json(record),
                    text: "firmware \(record.id): \(record.module) \(record.version), \(record.size) bytes, sha256 \(record.sha256)")
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A product's packages.")
            @Option(help: "The product key.") var product: String
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let records = try await options.withAdministration { try await $0.firmware(productKey: product) }
                let text = records.map { "\($0.id)  \($0.module)  \($0.version)  \($0.size) bytes  \($0.sha256)" }
                options.print(json: .array(records.map(FirmwareGroup.json)), text: text.isEmpty ? "no firmware" : text.joined(separator: "\n"))
            }
        }

        struct Upgrade: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Offer a package to devices of its product (all of them, or those named): now to those connected, to the others when they connect.")
            @Option(help: "The package's id.") var id: Int64
            @Option(name: .customLong("did"), help: "A device to offer it to (repeat); all of the product's devices when none is named.") var dids: [String] =
                []
            @Option(help: "Seconds the offer stays open (60 to 604800).") var ttl: Int64 = FirmwareUpgrades.defaultLifetime
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let started = try await options.withAdministration {
                    try await $0.startUpgradeJob(firmwareID: id, dids: dids.isEmpty ? nil : dids, lifetime: ttl)
                }
                var lines = ["job \(started.jobID): offered to \(started.offered.count) devices"]
                lines += started.skipped.map { "  skipped \($0.did): \($0.reason)" }
                options.print(
                    json: [
                        "jobId": .int(started.jobID), "offered": .array(started.offered.map(JSONValue.string)),
                        "skipped": .array(started.skipped.map { ["did": .string($0.did), "reason": .string($0.reason)] }),
                    ], text: lines.joined(separator: "\n"))
            }
        }

        struct Job: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Where each upgrade of a job is.")
            @Option(help: "The job's id.") var id: Int64
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let upgrades = try await options.withAdministration { try await $0.upgradeJob(id) }
                var counts: [String: Int] = [:]
                for upgrade in upgrades { counts[upgrade.state, default: 0] += 1 }
                var lines = [counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")]
                lines += upgrades.map { "  \($0.did)  \($0.state)" + ($0.step.map { " step \($0)" } ?? "") + ($0.desc.isEmpty ? "" : "  \($0.desc)") }
                options.print(json: .array(upgrades.map(\.json)), text: lines.joined(separator: "\n"))
            }
        }

        struct URLCommand: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "url", abstract: "A signed, expiring download URL of a package.")
            @Option(help: "The package's id.") var id: Int64
            @Option(name: .customLong("public-url"), help: "The cloud's base URL as devices reach it.") var publicURL: String
            @Option(help: "Seconds the URL stays valid (at most 7 days).") var ttl: Int64 = 3600
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let url = try await options.withAdministration { try await $0.firmwareURL(id: id, publicURL: publicURL, lifetime: ttl) }
                options.print(json: ["url": .string(url)], text: url)
            }
        }
    }

    struct ProductGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "product", subcommands: [Create.self, List.self, Topics.self])

        /// `--user-topic PATH:OPERATION`, repeated; nil when none was given.
        static func topicClasses(_ texts: [String]) throws -> AlinkTopicClasses? {
            guard !texts.isEmpty else { return nil }
            do {
                return try AlinkTopicClasses(try texts.map { text throws(TetherError) in try AlinkTopicClass(parsing: text) })
            } catch {
                throw ValidationError(error.message)
            }
        }

        struct Topics: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Set a product's custom topic classes (/{pk}/{dn}/user/PATH); devices get them when they next connect.")
            @Option(help: "The product key.") var product: String
            @Option(name: .customLong("user-topic"), help: "PATH:pub (devices publish), PATH:sub (devices subscribe) or PATH:pub/sub; repeat for each.")
            var userTopics: [String] = []
            @Flag(name: .customLong("none"), help: "No custom topics at all.") var none = false
            @OptionGroup var options: AdminOptions

            func validate() throws {
                guard userTopics.isEmpty != none else { throw ValidationError("give --user-topic PATH:OPERATION (repeatable) or --none") }
                _ = try ProductGroup.topicClasses(userTopics)
            }

            func run() async throws {
                let classes = try ProductGroup.topicClasses(userTopics) ?? .none
                try await options.withAdministration { try await $0.setUserTopics(productKey: product, classes) }
                options.print(json: ["productKey": .string(product), "userTopics": .string(classes.encoded)], text: "user topics: \(classes.encoded)")
            }
        }

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Import a product model; prints its productKey and productSecret.")
            @Option var name: String
            @Option(help: "A Gizwits data-point JSON file.") var datapoints: String?
            @Option(help: "An Aliyun TSL JSON file.") var tsl: String?
            @Flag(help: "Owner/guest sharing: the first binder owns the device, others join by invitation.") var sharing = false
            @Flag(
                name: .customLong("unsigned-registration"),
                help:
                    "Accept GAgent's unsigned POST /dev/devices form for new devices (firmware that cannot sign; anyone who knows the product key can then create devices)."
            ) var unsignedRegistration = false
            @Flag(
                name: .customLong("whitelist-free-registration"),
                help:
                    "Let a device holding the product secret create itself on the gateway (Alink authType=regnwl) and reconnect with the token it gets."
            ) var whitelistFreeRegistration = false
            @Option(
                name: .customLong("user-topic"),
                help: "A custom topic class, PATH:pub, PATH:sub or PATH:pub/sub (repeatable; default update:pub, update/error:pub, get:sub).")
            var userTopics: [String] = []
            @OptionGroup var options: AdminOptions

            func validate() throws {
                guard (datapoints == nil) != (tsl == nil) else {
                    throw ValidationError("give exactly one of --datapoints FILE and --tsl FILE")
                }
                _ = try ProductGroup.topicClasses(userTopics)
            }

            func run() async throws {
                let (path, format): (String, ModelFormat) = if let datapoints { (datapoints, .gizwits) } else { (tsl!, .tsl) }
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ValidationError("cannot read \(path)")
                }
                let product = try await options.withAdministration {
                    try await $0.createProduct(
                        name: name, modelFile: Array(data), format: format, sharingEnabled: sharing, unsignedRegistration: unsignedRegistration,
                        whitelistFreeRegistration: whitelistFreeRegistration, userTopics: try ProductGroup.topicClasses(userTopics) ?? .standard
                    )
                }
                options.print(
                    json: ["productKey": .string(product.productKey), "productSecret": .string(product.productSecret)],
                    text: "productKey: \(product.productKey)\nproductSecret: \(product.productSecret)"
                )
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List products.")
            @OptionGroup var options: AdminOptions

            func run() async throws {
                let products = try await options.withAdministration { try await $0.products() }
                let json = JSONValue.array(
                    products.map { product in
                        .object([
                            "productKey": .string(product.productKey),
                            "name": .string(product.name),
                            "dataPoints": .int(Int64(product.model.dataPoints.count)),
                            "sharing": .bool(product.sharingEnabled),
                            "unsignedRegistration": .bool(product.unsignedRegistration),
                            "whitelistFreeRegistration": .bool(product.whitelistFreeRegistration),
                            "userTopics": .string(product.userTopics.encoded),
                            "createdAt": .int(product.createdAt),
                        ])
                    })
                let text = products.map { "\($0.productKey)  \($0.name)  (\($0.model.dataPoints.count) data points)" }
                options.print(json: json, text: text.isEmpty ? "no products" : text.joined(separator: "\n"))
            }
        }
    }

    struct DeviceGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "device", subcommands: [Create.self, Import.self, TuyaKey.self])

        struct TuyaKey: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "tuya-key",
                abstract: "Register the Tuya id, version and local key of a device that speaks the Tuya local protocol; its owner's app fetches them.")
            @Option(help: "The device's did in this cloud.") var did: String
            @Option(name: .customLong("tuya-id"), help: "The device's Tuya id (gwId).") var tuyaID: String
            @Option(name: .customLong("local-key"), help: "The 16-character local key (or TETHER_TUYA_LOCAL_KEY, which keeps it out of the process list).")
            var localKey: String?
            @Option(help: "The Tuya protocol version: 3.1 to 3.5.") var version: String
            @OptionGroup var options: AdminOptions

            func run() async throws {
                guard let key = localKey ?? ProcessInfo.processInfo.environment["TETHER_TUYA_LOCAL_KEY"] else {
                    throw ValidationError("give the local key with --local-key or TETHER_TUYA_LOCAL_KEY")
                }
                try await options.withAdministration { try await $0.setTuyaLocalKey(did: did, tuyaID: tuyaID, localKey: key, version: version) }
                options.print(
                    json: ["did": .string(did), "tuyaID": .string(tuyaID), "version": .string(version)], text: "did \(did): Tuya \(version) id \(tuyaID)")
            }
        }

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Register a device with its own secret for the MQTT gateway, or --count N of them named --name-prefix P1 … PN (all or none).")
            @Option(help: "The product key.") var product: String
            @Option(help: "The device's name (one device).") var name: String?
            @Option(help: "The device's MAC (one device).") var mac: String?
            @Option(help: "How many devices, named --name-prefix followed by 1 … N zero-padded.") var count: Int?
            @Option(name: .customLong("name-prefix"), help: "With --count: the names' prefix.") var namePrefix: String?
            @OptionGroup var options: AdminOptions

            func validate() throws {
                if let count {
                    guard (1...DeviceImport.maximumDevices).contains(count) else { throw ValidationError("--count is 1 to \(DeviceImport.maximumDevices)") }
                    guard let namePrefix, !namePrefix.isEmpty else { throw ValidationError("--count needs --name-prefix") }
                    guard name == nil, mac == nil else { throw ValidationError("--count makes many devices: no --name or --mac") }
                    // The devices' secrets are drawn here and printed once: without --json they would be lost.
                    guard options.json else { throw ValidationError("--count prints each device with its secret: add --json (and redirect it to a file)") }
                } else {
                    guard name != nil else { throw ValidationError("--name names the device (or --count N --name-prefix P makes many)") }
                    guard namePrefix == nil else { throw ValidationError("--name-prefix goes with --count") }
                }
            }

            func run() async throws {
                if let count, let namePrefix {
                    let devices = try await options.withAdministration {
                        try await $0.createDevices(DeviceImport.numbered(productKey: product, count: count, prefix: namePrefix))
                    }
                    DeviceGroup.print(devices, options: options)
                    return
                }
                let device = try await options.withAdministration { try await $0.createDevice(productKey: product, name: name ?? "", mac: mac) }
                options.print(
                    json: DeviceGroup.json(device),
                    text: """
                        did: \(device.did)
                        productKey: \(device.productKey)
                        deviceName: \(device.deviceName)
                        deviceSecret: \(device.deviceSecret)
                        passcode: \(device.passcode)\(device.mac.map { "\nmac: \($0)" } ?? "")
                        """
                )
            }
        }

        struct Import: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Register a fleet from a CSV file of productKey,deviceName,mac[,deviceSecret] lines (all or none).",
                discussion: "An empty MAC is allowed; a missing secret is drawn. With --json, prints one JSON object per device, as create does.")
            @Option(help: "The CSV file ('-' reads standard input).") var csv: String
            @OptionGroup var options: AdminOptions

            func validate() throws {
                guard options.json else { throw ValidationError("import prints each device with its secret: add --json (and redirect it to a file)") }
            }

            func run() async throws {
                let data = csv == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: csv))
                let entries: [DeviceEntry]
                do {
                    entries = try DeviceImport.parseCSV(String(decoding: data, as: UTF8.self))
                } catch {
                    throw ValidationError("\(csv): \(error.message)")
                }
                guard !entries.isEmpty else { throw ValidationError("\(csv) lists no devices") }
                let devices = try await options.withAdministration { try await $0.createDevices(entries) }
                DeviceGroup.print(devices, options: options)
            }
        }

        static func json(_ device: Administration.CreatedDevice) -> JSONValue {
            var json: JSONObject = [
                "did": .string(device.did), "productKey": .string(device.productKey), "deviceName": .string(device.deviceName),
                "deviceSecret": .string(device.deviceSecret), "passcode": .string(device.passcode),
            ]
            if let mac = device.mac { json["mac"] = .string(mac) }
            return .object(json)
        }

        /// One JSON object per line (what `tether-agent simulate --credentials` reads).
        static func print(_ devices: [Administration.CreatedDevice], options: AdminOptions) {
            var lines = ""
            lines.reserveCapacity(devices.count * 200)
            for device in devices {
                lines += json(device).serialized()
                lines += "\n"
            }
            FileHandle.standardOutput.write(Data(lines.utf8))
        }
    }

    struct UserGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "user", subcommands: [Disable.self, Enable.self])

        struct Disable: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Lock an account: its sessions end (live WebSocket connections close) and it logs in nowhere."
            )
            @Option(help: "The user's uid.") var uid: String
            @OptionGroup var options: AdminOptions

            func run() async throws {
                try await options.withAdministration { admin, bus in try await admin.setUserDisabled(uid: uid, true, bus: bus) }
                options.print(json: ["uid": .string(uid), "disabled": true], text: "disabled \(uid)")
            }
        }

        struct Enable: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Unlock an account disabled before.")
            @Option(help: "The user's uid.") var uid: String
            @OptionGroup var options: AdminOptions

            func run() async throws {
                try await options.withAdministration { admin, bus in try await admin.setUserDisabled(uid: uid, false, bus: bus) }
                options.print(json: ["uid": .string(uid), "disabled": false], text: "enabled \(uid)")
            }
        }
    }

    struct OutboxCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "outbox", abstract: "Show the SMS and e-mail the cloud would have sent, newest first.")
        @Option(help: "How many messages.") var limit = 20
        @OptionGroup var options: AdminOptions

        func run() async throws {
            let entries = try await options.withDatabase { try await OutboxSender.entries(in: $0, limit: limit) }
            let json = JSONValue.array(
                entries.map { entry in
                    .object([
                        "id": .int(entry.id),
                        "channel": .string(entry.message.channel.rawValue),
                        "recipient": .string(entry.message.recipient),
                        "subject": .string(entry.message.subject),
                        "body": .string(entry.message.body),
                        "createdAt": .int(entry.createdAt),
                    ])
                })
            let text = entries.map { "#\($0.id) \($0.message.channel.rawValue) to \($0.message.recipient): \($0.message.subject)\n\($0.message.body)" }
            options.print(json: json, text: text.isEmpty ? "the outbox is empty" : text.joined(separator: "\n\n"))
        }
    }
}

struct ThirdPartyOptions: ParsableArguments {
    @Option(name: .customLong("jwks-url"), help: "The third party's key set, for verifying its ID tokens.")
    var jwksURL: String?
    @Option(name: .customLong("jwt-issuer"), help: "The iss the ID tokens must carry.")
    var issuer: String?
    @Option(name: .customLong("jwt-audience"), help: "The aud the ID tokens must include (your client id with the third party).")
    var audience: String?

    var thirdPartyIssuer: ThirdPartyIssuer? { jwksURL.map { ThirdPartyIssuer(jwksURL: $0, issuer: issuer, audience: audience) } }
}

struct AdminOptions: ParsableArguments {
    @OptionGroup var databaseOptions: DatabaseOptions
    @Flag(help: "Print one JSON value.") var json = false

    func withDatabase<Result>(_ body: (any SQLDatabase) async throws -> Result) async throws -> Result {
        var logger = Logger(label: "tether-cloud")
        logger.logLevel = .warning
        let database = try await DatabaseURL(databaseOptions.database).open(logger: logger)
        do {
            let result = try await body(database)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }

    func withAdministration<Result>(_ body: (Administration) async throws -> Result) async throws -> Result {
        try await withDatabase { try await body(Administration(database: $0)) }
    }

    /// With the cluster bus of the nodes sharing a PostgreSQL database, so that what is done
    /// here reaches them at once (a SQLite cloud re-checks within a minute).
    func withAdministration<Result>(_ body: (Administration, (any ClusterBus)?) async throws -> Result) async throws -> Result {
        try await withDatabase { database in
            var logger = Logger(label: "tether-cloud")
            logger.logLevel = .warning
            let bus = (database as? PostgresEngine).map { PostgresClusterBus(engine: $0, logger: logger) }
            return try await body(Administration(database: database), bus)
        }
    }

    func print(json value: JSONValue, text: String) {
        Swift.print(json ? value.serialized() : text)
    }
}
