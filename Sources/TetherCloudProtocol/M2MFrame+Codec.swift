public import TetherCore

extension M2MFrame {
    /// The longest frame read by default (the cloud's limit).
    public static let maximumLength = 64 * 1024

    /// Reads one text frame.
    public init(decoding text: String, maximumLength: Int = M2MFrame.maximumLength) throws(M2MFrameError) {
        guard text.utf8.count <= maximumLength else {
            throw M2MFrameError(.notAFrame, "a frame is at most \(maximumLength) bytes")
        }
        guard let json = try? JSONValue.parse(text) else {
            throw M2MFrameError(.notAFrame, "a frame is one JSON object {\"cmd\", \"data\"}")
        }
        try self.init(json: json)
    }

    /// Reads a frame already parsed as JSON.
    public init(json: JSONValue) throws(M2MFrameError) {
        guard case .object(let object) = json else { throw M2MFrameError(.notAFrame, "a frame is one JSON object {\"cmd\", \"data\"}") }
        var reader = FrameReader(object: object)
        let command = try reader.string("cmd", in: object)
        let sequenceField = command == "s2c_ack" || command == "c2s_ack" || command.hasPrefix("s2c_") ? "res_sn" : "req_sn"
        reader.sequence = try? reader.sequence(sequenceField, in: object)
        switch command {
        case "login_req":
            let data = try reader.object("data", in: object)
            let format = try reader.optionalString("p0_type", in: data) ?? M2MDataFormat.attributes.rawValue
            guard let dataFormat = M2MDataFormat(rawValue: format) else { throw reader.wrongType("data.p0_type", "attrs_v4 or custom") }
            self = .login(
                M2MLogin(
                    appID: try reader.string("appid", in: data), uid: try reader.string("uid", in: data), token: try reader.string("token", in: data),
                    dataFormat: dataFormat, heartbeatInterval: try reader.optionalInt("heartbeat_interval", in: data),
                    autoSubscribe: try reader.optionalBool("auto_subscribe", in: data) ?? true
                ))
        case "subscribe_req":
            guard let entries = object["data"]?.arrayValue else { throw reader.wrongType("data", "a list of {did}") }
            var dids: [String] = []
            for entry in entries {
                guard case .object(let item) = entry else { throw reader.wrongType("data[]", "{did}") }
                dids.append(try reader.string("did", in: item))
            }
            self = .subscribe(dids: dids)
        case "c2s_write":
            let data = try reader.object("data", in: object)
            self = .write(
                M2MWrite(
                    sequence: reader.sequence, did: try reader.string("did", in: data), attrs: try reader.object("attrs", in: data),
                    queueTTL: try reader.optionalInt("queue_ttl", in: data)
                ))
        case "c2s_read":
            let data = try reader.object("data", in: object)
            var names: [String]?
            if let value = data["names"], value != .null {
                guard let list = value.arrayValue else { throw reader.wrongType("data.names", "a list of names") }
                names = try list.map { item throws(M2MFrameError) in
                    guard let name = item.stringValue else { throw reader.wrongType("data.names[]", "a name") }
                    return name
                }
            }
            self = .read(M2MRead(sequence: reader.sequence, did: try reader.string("did", in: data), names: names))
        case "c2s_raw", "s2c_raw":
            let data = try reader.object("data", in: object)
            let raw = M2MRaw(
                did: try reader.string("did", in: data), bytes: try reader.bytes("raw", in: data),
                queueTTL: command == "c2s_raw" ? try reader.optionalInt("queue_ttl", in: data) : nil
            )
            self = command == "c2s_raw" ? .raw(raw) : .rawReport(raw)
        case "c2s_ack":
            self = .acknowledge(M2MAcknowledgement(sequence: reader.sequence, did: try reader.optionalString("did", in: object)))
        case "ping":
            self = .ping
        case "pong":
            self = .pong
        case "login_res":
            let data = try reader.object("data", in: object)
            self = .loginResult(
                M2MLoginResult(
                    success: try reader.bool("success", in: data), errorCode: try reader.optionalInt("error_code", in: data).map { Int(clamping: $0) },
                    message: try reader.optionalString("msg", in: data)
                ))
        case "subscribe_res":
            let data = try reader.object("data", in: object)
            func entries(_ key: String) throws(M2MFrameError) -> [M2MSubscribeResult.Entry] {
                guard let list = data[key]?.arrayValue else { throw reader.wrongType("data.\(key)", "a list") }
                return try list.map { item throws(M2MFrameError) in
                    guard case .object(let entry) = item else { throw reader.wrongType("data.\(key)[]", "{did, error_code, msg}") }
                    return M2MSubscribeResult.Entry(
                        did: try reader.optionalString("did", in: entry), errorCode: Int(clamping: try reader.optionalInt("error_code", in: entry) ?? 0),
                        message: try reader.optionalString("msg", in: entry) ?? ""
                    )
                }
            }
            self = .subscribeResult(M2MSubscribeResult(success: try entries("success"), failed: try entries("failed")))
        case "s2c_ack":
            self = .writeAcknowledged(
                M2MWriteAcknowledgement(
                    sequence: reader.sequence, did: try reader.string("did", in: object), commandID: try reader.optionalInt("command_id", in: object)
                ))
        case "s2c_noti":
            let data = try reader.object("data", in: object)
            self = .notification(
                M2MNotification(
                    answering: reader.sequence, request: try? reader.sequence("req_sn", in: object),
                    commandID: try reader.optionalInt("command_id", in: object),
                    did: try reader.string("did", in: data), attrs: try reader.object("attrs", in: data)
                ))
        case "s2c_invalid_msg":
            let data = try reader.object("data", in: object)
            self = .invalid(
                M2MInvalid(
                    sequence: reader.sequence, commandID: try reader.optionalInt("command_id", in: object),
                    errorCode: Int(clamping: try reader.int("error_code", in: data)), message: try reader.optionalString("msg", in: data) ?? "",
                    did: try reader.optionalString("did", in: data)
                ))
        case "s2c_online_status":
            let data = try reader.object("data", in: object)
            self = .onlineStatus(
                M2MOnlineStatus(
                    did: try reader.string("did", in: data), passcode: try reader.optionalString("passcode", in: data) ?? "",
                    mac: try reader.optionalString("mac", in: data) ?? "", online: try reader.bool("online", in: data)
                ))
        case "s2c_binding_changed":
            let data = try reader.object("data", in: object)
            self = .bindingChanged(did: try reader.string("did", in: data), bound: try reader.bool("bind", in: data))
        case "s2c_event":
            let data = try reader.object("data", in: object)
            self = .event(
                M2MEvent(
                    did: try reader.string("did", in: data), identifier: try reader.string("event", in: data),
                    type: try reader.optionalString("type", in: data) ?? "info", values: data["values"] ?? .null,
                    timestamp: try reader.optionalInt("timestamp", in: data) ?? 0
                ))
        case "s2c_user_topic":
            let data = try reader.object("data", in: object)
            guard let payload = [UInt8](tetherBase64: try reader.string("payload_base64", in: data)) else {
                throw reader.wrongType("data.payload_base64", "padded Base64")
            }
            self = .userTopic(
                M2MUserTopic(
                    did: try reader.string("did", in: data), topic: try reader.string("topic", in: data), payload: payload,
                    timestamp: try reader.optionalInt("timestamp", in: data) ?? 0
                ))
        case "s2c_message":
            let data = try reader.object("data", in: object)
            do throws(CloudBodyError) {
                self = .message(try MessageBody(json: .object(data)))
            } catch {
                throw reader.wrongType("data.\(error.field)", error.message)
            }
        case "s2c_pairing":
            let data = try reader.object("data", in: object)
            do throws(CloudBodyError) {
                self = .pairing(try PairingStatusBody(json: .object(data)))
            } catch {
                throw reader.wrongType("data.\(error.field)", error.message)
            }
        case "s2c_schedules":
            let data = try reader.object("data", in: object)
            do throws(CloudBodyError) {
                self = .schedules(try ScheduleChangeBody(json: .object(data)))
            } catch {
                throw reader.wrongType("data.\(error.field)", error.message)
            }
        case "s2c_upgrade":
            let data = try reader.object("data", in: object)
            do throws(CloudBodyError) {
                self = .upgrade(try FirmwareUpgradeBody(json: .object(data)))
            } catch {
                throw reader.wrongType("data.\(error.field)", error.message)
            }
        default:
            throw M2MFrameError(.unknownCommand, "unknown cmd \"\(command.prefix(40))\"", sequence: reader.sequence)
        }
    }

    /// The frame as JSON.
    public var json: JSONValue {
        var frame: JSONObject = ["cmd": .string(command)]
        switch self {
        case .login(let login):
            var data: JSONObject = [
                "appid": .string(login.appID), "uid": .string(login.uid), "token": .string(login.token),
                "p0_type": .string(login.dataFormat.rawValue), "auto_subscribe": .bool(login.autoSubscribe),
            ]
            if let interval = login.heartbeatInterval { data["heartbeat_interval"] = .int(interval) }
            frame["data"] = .object(data)
        case .subscribe(let dids):
            frame["data"] = .array(dids.map { ["did": .string($0)] })
        case .write(let write):
            frame["req_sn"] = write.sequence?.json
            var data: JSONObject = ["did": .string(write.did), "attrs": .object(write.attrs)]
            if let ttl = write.queueTTL { data["queue_ttl"] = .int(ttl) }
            frame["data"] = .object(data)
        case .read(let read):
            frame["req_sn"] = read.sequence?.json
            var data: JSONObject = ["did": .string(read.did)]
            if let names = read.names { data["names"] = .array(names.map(JSONValue.string)) }
            frame["data"] = .object(data)
        case .raw(let raw), .rawReport(let raw):
            var data: JSONObject = ["did": .string(raw.did), "raw": .array(raw.bytes.map { .int(Int64($0)) })]
            if let ttl = raw.queueTTL { data["queue_ttl"] = .int(ttl) }
            frame["data"] = .object(data)
        case .acknowledge(let acknowledgement):
            frame["res_sn"] = acknowledgement.sequence?.json
            if let did = acknowledgement.did { frame["did"] = .string(did) }
        case .ping, .pong:
            break
        case .loginResult(let result):
            var data: JSONObject = ["success": .bool(result.success)]
            if let code = result.errorCode { data["error_code"] = .int(Int64(code)) }
            if let message = result.message { data["msg"] = .string(message) }
            frame["data"] = .object(data)
        case .subscribeResult(let result):
            func entries(_ list: [M2MSubscribeResult.Entry]) -> JSONValue {
                .array(list.map { ["did": $0.did.map(JSONValue.string) ?? .null, "error_code": .int(Int64($0.errorCode)), "msg": .string($0.message)] })
            }
            frame["data"] = ["success": entries(result.success), "failed": entries(result.failed)]
        case .writeAcknowledged(let acknowledgement):
            frame["res_sn"] = acknowledgement.sequence?.json
            frame["did"] = .string(acknowledgement.did)
            if let id = acknowledgement.commandID { frame["command_id"] = .int(id) }
        case .notification(let notification):
            frame["res_sn"] = notification.answering?.json
            frame["req_sn"] = notification.request?.json
            if let id = notification.commandID { frame["command_id"] = .int(id) }
            frame["data"] = ["did": .string(notification.did), "attrs": .object(notification.attrs)]
        case .invalid(let invalid):
            frame["res_sn"] = invalid.sequence?.json
            if let id = invalid.commandID { frame["command_id"] = .int(id) }
            var data: JSONObject = ["error_code": .int(Int64(invalid.errorCode)), "msg": .string(invalid.message)]
            if let did = invalid.did { data["did"] = .string(did) }
            frame["data"] = .object(data)
        case .onlineStatus(let status):
            frame["data"] = ["did": .string(status.did), "passcode": .string(status.passcode), "mac": .string(status.mac), "online": .bool(status.online)]
        case .bindingChanged(let did, let bound):
            frame["data"] = ["did": .string(did), "bind": .bool(bound)]
        case .event(let event):
            frame["data"] = [
                "did": .string(event.did), "event": .string(event.identifier), "type": .string(event.type),
                "values": event.values, "timestamp": .int(event.timestamp),
            ]
        case .userTopic(let message):
            frame["data"] = [
                "did": .string(message.did), "topic": .string(message.topic), "payload_base64": .string(message.payload.tetherBase64),
                "timestamp": .int(message.timestamp),
            ]
        case .upgrade(let upgrade):
            frame["data"] = upgrade.json
        case .message(let message):
            frame["data"] = message.json
        case .pairing(let status):
            frame["data"] = status.json
        case .schedules(let change):
            frame["data"] = change.json
        }
        return .object(frame)
    }

    /// The frame as the text of a WebSocket text frame.
    public func encoded() -> String { json.serialized() }
}

extension M2MSequence {
    var json: JSONValue {
        switch self {
        case .number(let number): .int(number)
        case .text(let text): .string(text)
        }
    }
}

/// Field access with errors that name the command and the field.
private struct FrameReader {
    let object: JSONObject
    var sequence: M2MSequence?

    var command: String { object["cmd"]?.stringValue ?? "frame" }

    func missing(_ field: String) -> M2MFrameError {
        M2MFrameError(.missingField, "\(command) needs \(field)", sequence: sequence)
    }

    func wrongType(_ field: String, _ expected: String) -> M2MFrameError {
        M2MFrameError(.wrongType, "\(command): \(field) must be \(expected)", sequence: sequence)
    }

    func object(_ key: String, in object: JSONObject) throws(M2MFrameError) -> JSONObject {
        guard let value = object[key], value != .null else { throw missing(key) }
        guard case .object(let found) = value else { throw wrongType(key, "an object") }
        return found
    }

    func optionalString(_ key: String, in object: JSONObject) throws(M2MFrameError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw wrongType(key, "a string")
        }
    }

    func string(_ key: String, in object: JSONObject) throws(M2MFrameError) -> String {
        guard let text = try optionalString(key, in: object) else { throw missing(key) }
        return text
    }

    func optionalInt(_ key: String, in object: JSONObject) throws(M2MFrameError) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let number)?: return number
        case .double(let number)? where number.rounded() == number && abs(number) < 9e15: return Int64(number)
        default: throw wrongType(key, "a whole number")
        }
    }

    func int(_ key: String, in object: JSONObject) throws(M2MFrameError) -> Int64 {
        guard let number = try optionalInt(key, in: object) else { throw missing(key) }
        return number
    }

    func optionalBool(_ key: String, in object: JSONObject) throws(M2MFrameError) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw wrongType(key, "true or false")
        }
    }

    func bool(_ key: String, in object: JSONObject) throws(M2MFrameError) -> Bool {
        guard let flag = try optionalBool(key, in: object) else { throw missing(key) }
        return flag
    }

    func sequence(_ key: String, in object: JSONObject) throws(M2MFrameError) -> M2MSequence? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let number)?: return .number(number)
        case .string(let text)?: return .text(text)
        default: throw wrongType(key, "a number or a string")
        }
    }

    func bytes(_ key: String, in object: JSONObject) throws(M2MFrameError) -> [UInt8] {
        guard let value = object[key], value != .null else { throw missing(key) }
        guard let items = value.arrayValue else { throw wrongType(key, "a list of bytes") }
        return try items.map { item throws(M2MFrameError) in
            guard case .int(let number) = item, let byte = UInt8(exactly: number) else { throw wrongType(key, "a list of integers 0…255") }
            return byte
        }
    }
}
