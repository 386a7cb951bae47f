import TetherCloudProtocol
import TetherCore

/// The named schemas of the document (`#/components/schemas/…`).
enum CloudSchemas {
    static let components: KeyValuePairs<String, JSONValue> = [
        "Error": JSONSchema.object(
            [
                "error_code": JSONSchema.integer,
                "error_message": JSONSchema.string,
                "detail": JSONSchema.string,
            ], required: ["error_code", "error_message", "detail"]),
        "Session": JSONSchema.object(
            [
                "uid": JSONSchema.string,
                "token": JSONSchema.string,
                "expire_at": JSONSchema.integer,
            ], required: ["uid", "token", "expire_at"]),
        "SessionInfo": JSONSchema.object(
            [
                "id": JSONSchema.string, "appid": JSONSchema.string, "created_at": JSONSchema.integer, "expire_at": JSONSchema.integer,
                "last_used_at": JSONSchema.integer, "source": JSONSchema.string, "user_agent": JSONSchema.string, "current": JSONSchema.boolean,
            ], required: ["id", "appid", "created_at", "expire_at", "last_used_at", "source", "user_agent", "current"]),
        "User": JSONSchema.object(
            [
                "uid": JSONSchema.string, "username": JSONSchema.string, "phone": JSONSchema.string, "email": JSONSchema.string,
                "name": JSONSchema.string, "gender": ["type": "string", "enum": ["M", "F", "N"]], "birthday": JSONSchema.string,
                "address": JSONSchema.string, "lang": JSONSchema.string, "remark": JSONSchema.string, "is_anonymous": JSONSchema.boolean,
            ], required: ["uid", "username", "phone", "email", "name", "gender", "birthday", "address", "lang", "remark", "is_anonymous"]),
        "Device": JSONSchema.object(
            [
                "product_key": JSONSchema.string, "did": JSONSchema.string, "mac": JSONSchema.string, "is_online": JSONSchema.boolean,
                "passcode": JSONSchema.string, "host": JSONSchema.string, "port": JSONSchema.integer, "port_s": JSONSchema.integer,
                "ws_port": JSONSchema.integer, "wss_port": JSONSchema.integer, "remark": JSONSchema.string, "is_disabled": JSONSchema.boolean,
                "type": ["type": "string", "enum": ["normal", "center_control", "sub_dev"]],
                "dev_alias": JSONSchema.string, "dev_label": JSONSchema.array(JSONSchema.string),
                "role": ["type": "string", "enum": ["special", "normal", "owner", "guest"]],
                "proto_ver": JSONSchema.string, "wifi_soft_version": JSONSchema.string, "is_sandbox": JSONSchema.boolean,
                "product_name": JSONSchema.string, "protoc": JSONSchema.integer, "mcu_soft_version": JSONSchema.string,
                "mcu_hard_version": JSONSchema.string, "home_id": ["type": "integer", "format": "int64", "nullable": true],
                "room_id": ["type": "integer", "format": "int64", "nullable": true],
            ],
            required: [
                "product_key", "did", "mac", "is_online", "passcode", "host", "port", "port_s", "ws_port", "wss_port",
                "remark", "is_disabled", "type", "dev_alias", "dev_label", "role", "proto_ver", "wifi_soft_version",
                "is_sandbox", "product_name", "protoc", "mcu_soft_version", "mcu_hard_version",
            ]),
        "DidResults": JSONSchema.object(
            [
                "success": JSONSchema.array(JSONSchema.string),
                "failed": JSONSchema.array(JSONSchema.string),
            ], required: ["success", "failed"]),
        "Command": JSONSchema.object(
            [
                "id": JSONSchema.integer, "did": JSONSchema.string,
                "kind": ["type": "string", "enum": ["attrs", "raw", "service", "ota"]],
                "state": ["type": "string", "enum": ["accepted", "queued", "sent", "acknowledged", "applied", "rejected", "expired", "failed"]],
                "code": ["type": "integer", "format": "int64", "nullable": true], "message": JSONSchema.string,
                "created_at": JSONSchema.integer, "updated_at": JSONSchema.integer,
                "sent_at": ["type": "integer", "format": "int64", "nullable": true],
                "queue_until": ["type": "integer", "format": "int64", "nullable": true],
                "attrs": JSONSchema.empty, "raw": JSONSchema.string, "service": JSONSchema.string, "params": JSONSchema.empty, "output": JSONSchema.empty,
                "upgrade": JSONSchema.ref("FirmwareUpgrade"), "source": ["type": "string", "enum": ["app", "scheduler", "scene", "rule"]],
            ], required: ["id", "did", "kind", "state", "code", "message", "created_at", "updated_at", "sent_at", "queue_until", "source"]),
        "Schedule": JSONSchema.object(
            [
                "id": JSONSchema.string, "product_key": JSONSchema.string, "did": JSONSchema.string, "group_id": JSONSchema.string,
                "scene_id": JSONSchema.string, "date": JSONSchema.string, "time": JSONSchema.string, "repeat": JSONSchema.string,
                "days": JSONSchema.array(JSONSchema.string), "start_date": JSONSchema.string, "end_date": JSONSchema.string,
                "enabled": JSONSchema.boolean, "remark": JSONSchema.string, "tz": JSONSchema.string, "queue_ttl": JSONSchema.integer,
                "attrs": JSONSchema.empty, "raw": JSONSchema.string, "binary_coding": ["type": "string", "enum": ["hex", "base64"]],
                "created_at": JSONSchema.integer, "updated_at": JSONSchema.integer,
                "next_run": ["type": "integer", "format": "int64", "nullable": true],
            ], required: ["id", "product_key", "time", "repeat", "enabled", "remark", "tz", "created_at", "updated_at", "next_run"]),
        "ScheduleRun": JSONSchema.object(
            [
                "id": JSONSchema.integer, "schedule_id": JSONSchema.string, "planned_at": JSONSchema.integer,
                "fired_at": ["type": "integer", "format": "int64", "nullable": true],
                "command_id": ["type": "integer", "format": "int64", "nullable": true],
                "run_id": ["type": "string", "nullable": true, "description": "a group's or a scene's run"], "state": JSONSchema.string,
                "error_code": ["type": "integer", "format": "int64", "nullable": true], "message": JSONSchema.string,
            ], required: ["id", "schedule_id", "planned_at", "fired_at", "command_id", "run_id", "state", "error_code", "message"]),
        "Rule": JSONSchema.object(
            [
                "rule_id": JSONSchema.string, "name": JSONSchema.string("at most 64 bytes", maxLength: 64),
                "remark": JSONSchema.string("at most 256 bytes", maxLength: 256), "did": JSONSchema.string("the device whose events trigger it", maxLength: 64),
                "product_key": JSONSchema.string, "event": ["type": "string", "enum": ["online", "offline", "alert", "fault", "data"]],
                "event_attr": JSONSchema.object(
                    ["attr_name": JSONSchema.string, "value": ["type": "string", "enum": ["1", "0"]]], required: ["attr_name"]),
                "interval": JSONSchema.integer(minimum: 0, maximum: RuleFieldsBody.maximumInterval),
                "input": JSONSchema.array(
                    JSONSchema.object(
                        ["did": JSONSchema.string, "product_key": JSONSchema.string, "prefix": JSONSchema.string("letters, digits and _", maxLength: 32)],
                        required: ["did", "product_key", "prefix"]), maxItems: RuleFieldsBody.maximumInputs),
                "condition": JSONSchema.array(
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                "left": JSONSchema.string("prefix.name, a number, or a 'string'"),
                                "opt": ["type": "string", "enum": [">", ">=", "<", "<=", "==", "!="]], "right": JSONSchema.string,
                            ], required: ["left", "opt", "right"])), maxItems: RuleFieldsBody.maximumGroups),
                "output": JSONSchema.array(
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                "type": ["type": "string", "enum": ["devctrl", "delay"]], "did": JSONSchema.string, "attrs": JSONSchema.empty,
                                "raw": JSONSchema.array(JSONSchema.integer(minimum: 0, maximum: 255)), "delay": JSONSchema.integer(minimum: 1, maximum: 3600),
                            ], required: ["type"])), maxItems: RuleFieldsBody.maximumGroups),
                "created_at": JSONSchema.integer, "updated_at": JSONSchema.integer,
                "last_fired_at": ["type": "integer", "format": "int64", "nullable": true],
            ], required: ["name", "did", "product_key", "event", "output"]),
        "SceneTask": JSONSchema.object(
            [
                "task_type": ["type": "string", "enum": ["delay", "device", "group"]],
                "time": JSONSchema.integer(minimum: 1, maximum: 3600), "did": JSONSchema.string("device tasks", maxLength: 64),
                "group_id": JSONSchema.string("group tasks (single-product groups)", maxLength: 64),
                "attrs": ["type": "object", "description": "enums by index, binary data points as Base64"],
                "raw": JSONSchema.string("Base64 (hex with binary_coding)"), "binary_coding": ["type": "string", "enum": ["hex", "base64"]],
                "product_key": JSONSchema.string, "group_name": JSONSchema.string, "dev_alias": JSONSchema.string, "dev_remark": JSONSchema.string,
                "verbose_name": JSONSchema.string,
            ], required: ["task_type"]),
        "Scene": JSONSchema.object(
            [
                "id": JSONSchema.string, "scene_name": JSONSchema.string, "remark": JSONSchema.string,
                "tasks": JSONSchema.array(JSONSchema.ref("SceneTask")), "created_at": JSONSchema.integer, "updated_at": JSONSchema.integer,
            ], required: ["id", "scene_name", "remark", "tasks", "created_at", "updated_at"]),
        "FirmwareUpgrade": JSONSchema.object(
            [
                "command_id": JSONSchema.integer, "did": JSONSchema.string,
                "state": ["type": "string", "enum": ["queued", "sent", "acknowledged", "applied", "expired", "failed"]],
                "firmware_id": JSONSchema.integer, "version": JSONSchema.string, "module": JSONSchema.string,
                "step": ["type": "integer", "format": "int64", "nullable": true, "minimum": -4, "maximum": 100], "desc": JSONSchema.string,
                "updated_at": JSONSchema.integer,
            ], required: ["command_id", "did", "state", "firmware_id", "version", "module", "step", "desc", "updated_at"]),
        "FirmwarePackage": JSONSchema.object(
            [
                "id": JSONSchema.integer, "module": JSONSchema.string, "version": JSONSchema.string, "size": JSONSchema.integer,
                "sha256": JSONSchema.string, "md5": JSONSchema.string, "created_at": JSONSchema.integer,
            ], required: ["id", "module", "version", "size", "sha256", "md5", "created_at"]),
        "DidList": JSONSchema.object(
            [
                "devices": JSONSchema.array(JSONSchema.object(["did": JSONSchema.string], required: ["did"]), maxItems: 100)
            ], required: ["devices"]),
        "Home": JSONSchema.object(
            [
                "id": JSONSchema.integer, "name": JSONSchema.string, "geo_name": JSONSchema.string,
                "latitude": ["type": "number", "nullable": true], "longitude": ["type": "number", "nullable": true],
                "role": ["type": "string", "enum": ["owner", "admin", "member"]],
                "rooms": JSONSchema.array(JSONSchema.ref("Room")),
                "members": JSONSchema.array(
                    JSONSchema.object(
                        [
                            "uid": JSONSchema.string, "name": JSONSchema.string, "role": ["type": "string", "enum": ["owner", "admin", "member"]],
                            "joined_at": JSONSchema.integer,
                        ], required: ["uid", "name", "role", "joined_at"])),
                "devices": JSONSchema.array(
                    JSONSchema.object(
                        ["did": JSONSchema.string, "room_id": ["type": "integer", "format": "int64", "nullable": true]], required: ["did", "room_id"])),
                "created_at": JSONSchema.integer,
            ], required: ["id", "name", "geo_name", "latitude", "longitude", "role", "rooms", "members", "devices", "created_at"]),
        "Room": JSONSchema.object(["id": JSONSchema.integer, "name": JSONSchema.string], required: ["id", "name"]),
        "HomeInvitation": JSONSchema.object(
            [
                "id": JSONSchema.integer, "home_id": JSONSchema.integer, "home_name": JSONSchema.string, "inviter_uid": JSONSchema.string,
                "invitee_uid": JSONSchema.string, "role": ["type": "string", "enum": ["owner", "admin", "member"]],
                "status": JSONSchema.integer(minimum: 0, maximum: 3), "created_at": JSONSchema.integer, "expired_at": JSONSchema.integer,
            ], required: ["id", "home_id", "home_name", "inviter_uid", "invitee_uid", "role", "status", "created_at", "expired_at"]),
    ]
}
