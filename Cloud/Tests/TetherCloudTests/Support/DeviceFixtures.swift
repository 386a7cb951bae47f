import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TetherAlink
import TetherCore
@testable import TetherCloud

enum DeviceFixtures {
    static let petHouseURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("products/pet-house.json")

    static func petHouse() throws -> [UInt8] {
        Array(try Data(contentsOf: petHouseURL))
    }

    struct Registered {
        var did: String
        var passcode: String
        var mac: String
        var productKey: String
        var productSecret: String
    }

    /// A product, and a device of it registered the way GAgent does (a form post).
    static func registeredDevice(_ cloud: CloudHarness, sharing: Bool = false, mac: String? = nil) async throws -> Registered {
        let product = try await cloud.admin.createProduct(name: "Pet house", modelFile: try petHouse(), format: .gizwits, sharingEnabled: sharing)
        return try await register(cloud, product: product, mac: mac)
    }

    /// `timestamp`: a device's registrations each carry a newer one (a second later is enough).
    static func register(_ cloud: CloudHarness, product: Administration.CreatedProduct, mac: String? = nil, timestamp: Int64 = Clock.unixNow()) async throws -> Registered {
        let mac = mac ?? Secrets.hex(bytes: 6)
        let passcode = Secrets.passcode()
        let form = try #require(DeviceRegistrationForm(productKey: product.productKey, mac: mac, passcode: passcode, timestamp: timestamp))
        let response = try await postRegistration(cloud, form.signed(with: product.productSecret).formEncoded)
        #expect(response.status == .created, "\(response.text)")
        let answer = try #require(DeviceRegistrationAnswer(formEncoded: response.text), "\(response.text)")
        #expect(answer.passcode == passcode)
        return Registered(did: answer.did, passcode: passcode, mac: mac, productKey: product.productKey, productSecret: product.productSecret)
    }

    /// `POST /dev/devices` with a form body, as GAgent sends it.
    static func postRegistration(_ cloud: CloudHarness, _ body: String, headers extra: HTTPFields = [:]) async throws -> APIResponse {
        var headers = extra
        headers[.contentType] = "application/x-www-form-urlencoded"
        let response = try await cloud.client.execute(uri: "/dev/devices", method: .post, headers: headers, body: ByteBuffer(string: body))
        return APIResponse(status: response.status, headers: response.headers, text: String(buffer: response.body))
    }

    static func bind(_ cloud: CloudHarness, _ device: Registered, token: String, passcode: String? = nil) async throws -> APIResponse {
        try await cloud.call(.post, "/app/bindings", token: token, json: [
            "devices": [["did": .string(device.did), "passcode": .string(passcode ?? device.passcode), "remark": "kitchen", "dev_alias": "lamp"]],
        ])
    }

    static func signatureHeaders(secret: String, timestamp: Int64 = Int64(Date().timeIntervalSince1970)) -> HTTPFields {
        var headers = HTTPFields()
        headers[HTTPField.Name("X-Gizwits-Timestamp")!] = String(timestamp)
        headers[HTTPField.Name("X-Gizwits-Signature")!] = Secrets.md5(secret + String(timestamp))
        return headers
    }
}
