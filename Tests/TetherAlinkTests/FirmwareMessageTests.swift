import NIOCore
import Testing
import TetherAlink
import TetherCore

/// The Alink OTA messages (`shared/reference/alink-mqtt.md` §3) as the Python device SDK writes
/// and reads them.
@Suite("OTA messages: version reports, progress, queries and upgrade notices")
struct FirmwareMessageTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("linkkit's own report and query payloads read (numeric ids, optional module)")
    func linkkitPayloads() throws {
        // Byte for byte what ota_report_version and query_ota_firmware publish.
        let report = try FirmwareVersionReport(parsing: Self.bytes(#"{"id": 1,"params": {"version":"1.0.1","module": "mcu"}}"#))
        #expect(report == FirmwareVersionReport(id: "1", version: "1.0.1", module: "mcu"))
        let plain = try FirmwareVersionReport(parsing: Self.bytes(#"{"id": 1, "params": {"version": "1.0.1"}}"#))
        #expect(plain.module == "default")
        #expect(try FirmwareQuery(parsing: Self.bytes(#"{"id": 7, "params": {}}"#)) == FirmwareQuery(id: "7", module: nil))
        #expect(try FirmwareQuery(parsing: Self.bytes(#"{"id": 7, "params": {"module": "wifi"}}"#)).module == "wifi")
        // Aliyun's documented progress report: step as a string.
        let progress = try FirmwareProgressReport(parsing: Self.bytes(#"{"id":"123","params":{"step":"-2","desc":"download failed","module":"mcu"}}"#))
        #expect(progress.step == -2 && progress.failure == .downloadFailed && progress.module == "mcu")
        #expect(try FirmwareProgressReport(parsing: Self.bytes(#"{"id":"1","params":{"step":95}}"#)).failure == nil)
    }

    @Test("malformed OTA payloads are refused as malformedPayload", arguments: [
        #"{"id":1,"params":{}}"#, #"{"id":1,"params":{"version":""}}"#, #"{"id":1,"params":{"version":"a b"}}"#,
        #"{"id":1,"params":{"version":"1","module":"a/b"}}"#, #"{"params":{"version":"1"}}"#, "[]", "not json",
        #"{"id":1,"params":{"version":"\#(String(repeating: "9", count: 65))"}}"#,
    ])
    func refusedReports(payload: String) {
        #expect(throws: TetherError.self) { _ = try FirmwareVersionReport(parsing: Self.bytes(payload)) }
    }

    @Test("progress outside -4…100, or not a number, is refused", arguments: [
        #"{"id":1,"params":{"step":"101"}}"#, #"{"id":1,"params":{"step":-5}}"#, #"{"id":1,"params":{"step":"x"}}"#,
        #"{"id":1,"params":{"step":true}}"#, #"{"id":1,"params":{}}"#, #"{"id":1,"params":{"step":1,"desc":"\#(String(repeating: "d", count: 300))"}}"#,
    ])
    func refusedProgress(payload: String) {
        #expect(throws: TetherError.self) { _ = try FirmwareProgressReport(parsing: Self.bytes(payload)) }
    }

    @Test("an upgrade notice carries everything linkkit requires, reads back, and an empty query reply reads as none")
    func notices() throws {
        let notice = FirmwareUpgradeNotice(
            id: "42", url: "http://127.0.0.1:8080/ota/firmware/3?expires=1&signature=ab", version: "2.0.0", size: 300_000, signMethod: .sha256,
            sign: String(repeating: "a", count: 64), md5: String(repeating: "b", count: 32), module: "default")
        let json = try JSONValue.parse(notice.bytes)
        // linkkit reads data.{url, version, size, signMethod, sign} and needs each non-empty; code "1000" as Aliyun sends it.
        #expect(json["code"] == "1000" && json["id"] == "42" && json["message"] == "success")
        #expect(json["data"]?["signMethod"] == "SHA256" && json["data"]?["size"] == 300_000 && json["data"]?["md5"] == .string(String(repeating: "b", count: 32)))
        #expect(try FirmwareUpgradeNotice(parsing: notice.bytes) == notice)
        let reply = AlinkReply(id: "5", data: notice.data)
        #expect(try FirmwareUpgradeNotice(parsing: reply.bytes)?.url == notice.url)
        #expect(try FirmwareUpgradeNotice(parsing: AlinkReply(id: "5").bytes) == nil)
        // Aliyun's Md5 variant, size as a string.
        let md5 = try FirmwareUpgradeNotice(
            parsing: Self.bytes(
                #"{"code":"1000","data":{"size":"10","sign":"0123456789abcdef0123456789abcdef","version":"1.1","url":"https://ota.example/f","signMethod":"Md5"},"id":9,"message":"success"}"#
            ))
        #expect(md5?.signMethod == .md5 && md5?.size == 10 && md5?.module == "default")
        for bad in [
            #"{"id":1,"data":{"url":"","version":"1","size":1,"signMethod":"Md5","sign":"0123456789abcdef0123456789abcdef"}}"#,
            #"{"id":1,"data":{"url":"http://x","version":"1","size":0,"signMethod":"Md5","sign":"0123456789abcdef0123456789abcdef"}}"#,
            #"{"id":1,"data":{"url":"http://x","version":"1","size":1,"signMethod":"CRC","sign":"0123456789abcdef0123456789abcdef"}}"#,
            #"{"id":1,"data":{"url":"http://x","version":"1","size":1,"signMethod":"Md5","sign":"0123456789ABCDEF0123456789ABCDEF"}}"#,
            #"{"id":1,"data":{"url":"http://x","version":"1","size":1,"signMethod":"SHA256","sign":"0123456789abcdef0123456789abcdef"}}"#,
        ] {
            #expect(throws: TetherError.self, "\(bad)") { _ = try FirmwareUpgradeNotice(parsing: Self.bytes(bad)) }
        }
    }

    @Test("digests piece by piece match the known vectors")
    func digests() {
        var sha = FirmwareDigest(.sha256)
        sha.update(ByteBuffer(string: "a"))
        sha.update(ByteBuffer(string: "bc"))
        #expect(sha.finalize() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var md5 = FirmwareDigest(.md5)
        md5.update(ByteBuffer(string: "ab"))
        md5.update(ByteBuffer(string: "c"))
        #expect(md5.finalize() == "900150983cd24fb0d6963f7d28e17f72")
    }

    @Test("URLs for downloads: scheme, host, port, target")
    func urls() throws {
        let url = try HTTPURL(parsing: "http://127.0.0.1:8080/ota/firmware/3?expires=1&signature=ab")
        #expect(url.host == "127.0.0.1" && url.port == 8080 && url.target == "/ota/firmware/3?expires=1&signature=ab" && !url.isSecure)
        let v6 = try HTTPURL(parsing: "https://[::1]/f")
        #expect(v6.host == "::1" && v6.port == 443 && v6.hostHeader == "[::1]" && v6.isSecure && v6.hostIsAddress)
        #expect(try HTTPURL(parsing: "http://example.com?x=1").target == "/?x=1")
        for bad in ["ftp://x/f", "http://", "http://:80/", "http://host:0/", "http://host:99999/", "http://user@host/"] {
            #expect(throws: TetherError.self, "\(bad)") { _ = try HTTPURL(parsing: bad) }
        }
    }
}
