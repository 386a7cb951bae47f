import Synchronization
public import TetherCore

/// A connected MOKO LW003-V3, logged in: its commands (one at a time, as both vendor clients
/// send them), its device information, its stored beacon records and its log.
///
/// Open one with ``withDevice(on:password:timeout:_:)`` inside a central's `withConnection`.
public final class LW003Device: Sendable {
    /// The link it runs on.
    public let link: any BluetoothConnection
    /// How long a reply (the login's included) may take: the iOS SDK allows 5 s.
    public let timeout: Duration
    private let replies = AsyncQueue<[UInt8]>()
    private let loginResults = AsyncQueue<[UInt8]>()
    /// One command on `AA02` at a time: a token taken for each request.
    private let commandToken = AsyncQueue<Void>()
    private let lastReason = Mutex<LW003DisconnectReason?>(nil)

    private init(link: any BluetoothConnection, timeout: Duration) {
        self.link = link
        self.timeout = timeout
        commandToken.append(())
    }

    static func id(_ characteristic: BluetoothUUID) -> BluetoothCharacteristicID {
        BluetoothCharacteristicID(service: LW003GATT.customService, characteristic: characteristic)
    }

    /// Turns on the notifications of `AA00`, `AA01` and `AA02`, logs in with `password` when
    /// given (the advertisement's ``LW003Advertisement/passwordRequired`` says whether the device
    /// wants one), runs `body`, and turns them off.
    ///
    /// - Throws: `gattAttributeNotFound` when the device lacks the LW003 service,
    ///   `loginFailed` for a wrong password, `timeout` when the device does not answer the login.
    public static func withDevice<Result: Sendable>(
        on link: any BluetoothConnection, password: String?, timeout: Duration = .seconds(5), _ body: (LW003Device) async throws -> Result
    ) async throws -> Result {
        let login = try password.map { password throws(TetherError) in try LW003Login(password: password) }
        for characteristic in [LW003GATT.login, LW003GATT.disconnectReason, LW003GATT.command] {
            _ = try await link.characteristic(id(characteristic))
        }
        let device = LW003Device(link: link, timeout: timeout)
        let loginValues = try await link.notifications(of: id(LW003GATT.login))
        let reasonValues = try await link.notifications(of: id(LW003GATT.disconnectReason))
        let replyValues = try await link.notifications(of: id(LW003GATT.command))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await value in loginValues { device.loginResults.append(value) }
                device.loginResults.finish()
            }
            group.addTask {
                for await value in replyValues { device.replies.append(value) }
                device.replies.finish()
            }
            group.addTask {
                for await value in reasonValues {
                    if let reason = try? LW003DisconnectReason(decoding: value) { device.lastReason.withLock { $0 = reason } }
                }
            }
            defer { group.cancelAll() }
            if let login { try await device.logIn(login) }
            return try await body(device)
        }
    }

    private func logIn(_ login: LW003Login) async throws(TetherError) {
        try await link.write(login.bytes, to: Self.id(LW003GATT.login), type: .withResponse)
        let queue = loginResults
        // Other AA00 values are ignored, as both vendor clients ignore them.
        let result = await within(timeout) { () async -> LW003LoginResult? in
            while let value = await queue.next() {
                if let result = try? LW003LoginResult(decoding: value) { return result }
            }
            return nil
        }
        switch result {
        case .accepted: return
        case .rejected: throw TetherError(.loginFailed, "the LW003 \(link.identifier) refused the password")
        case nil: throw TetherError(.timeout, "the LW003 \(link.identifier) did not answer the login within \(timeout)")
        }
    }

    /// The reason the device gave on `AA01` before it last dropped (or is about to drop) the link.
    public var disconnectReason: LW003DisconnectReason? {
        lastReason.withLock { $0 }
    }

    /// Sends a request on `AA02` and returns the device's reply to it (the one with its flag
    /// and command; others are skipped, as the iOS SDK does).
    public func send(_ request: LW003Frame) async throws(TetherError) -> LW003Frame {
        guard await commandToken.next() != nil else { throw TetherError(.cancelled, "cancelled before the LW003 command \(request.command) was sent") }
        defer { commandToken.append(()) }
        try await link.write(request.bytes, to: Self.id(LW003GATT.command), type: .withResponse)
        let queue = replies
        let reply = await within(timeout) { () async -> LW003Frame? in
            while let value = await queue.next() {
                if let frame = try? LW003Frame(decoding: value), frame.flag == request.flag, frame.command == request.command { return frame }
            }
            return nil
        }
        guard let reply else {
            if Task.isCancelled { throw TetherError(.cancelled, "cancelled waiting for the reply to the LW003 command \(request.command)") }
            throw TetherError(.timeout, "the LW003 \(link.identifier) did not answer \(request.command) within \(timeout)")
        }
        return reply
    }

    /// Reads a command's value.
    public func read(_ command: LW003CommandID) async throws(TetherError) -> LW003Frame {
        try await send(.readRequest(command))
    }

    /// Writes a command's value; throws `gattOperationFailed` when the device answers failure.
    public func write(_ command: LW003CommandID, value: [UInt8] = []) async throws(TetherError) {
        let reply = try await send(.writeRequest(command, value: value))
        guard reply.payload == [0x01] else {
            throw TetherError(.gattOperationFailed, "the LW003 \(link.identifier) refused \(command) (result \(reply.payload.tetherHex))")
        }
    }

    /// The Device Information service's texts (the serial number only when the device has one).
    public func deviceInformation() async throws(TetherError) -> LW003DeviceInformation {
        func text(_ uuid: BluetoothUUID) async throws(TetherError) -> String {
            let value = try await link.read(BluetoothCharacteristicID(service: LW003GATT.deviceInformationService, characteristic: uuid))
            return String(decoding: value, as: UTF8.self)
        }
        var serial: String?
        do { serial = try await text(LW003GATT.serialNumber) } catch  where error.code == .gattAttributeNotFound {}
        return LW003DeviceInformation(
            model: try await text(LW003GATT.modelNumber), serialNumber: serial, firmware: try await text(LW003GATT.firmwareRevision),
            hardware: try await text(LW003GATT.hardwareRevision), software: try await text(LW003GATT.softwareRevision),
            manufacturer: try await text(LW003GATT.manufacturerName))
    }

    /// Asks for the records stored over the last `days` (65535: all) and returns them as they
    /// stream in on `AA04`, oldest first. The sequence ends after the device's summary; it throws
    /// `malformedFrame` for a frame it cannot read and `unexpectedResponse` when the summary's count
    /// differs from the records received (some were lost), and `timeout` when no frame comes for
    /// `idleTimeout` (the device stopped before its summary).
    public func records(days: UInt16 = 65535, idleTimeout: Duration = .seconds(30)) async throws(TetherError) -> LW003RecordStream {
        guard idleTimeout > .zero else { throw TetherError(.invalidArgument, "the idle timeout of a record upload must be positive") }
        let values = try await link.notifications(of: Self.id(LW003GATT.storage))
        try await write(.startStorageUpload, value: [UInt8(days >> 8), UInt8(days & 0xFF)])
        return LW003RecordStream(values: values, idleTimeout: idleTimeout)
    }

    /// The device's log lines from now on, as it notifies them on `AA05`.
    public func log() async throws(TetherError) -> LW003LogStream {
        LW003LogStream(values: try await link.notifications(of: Self.id(LW003GATT.log)))
    }
}

/// The texts of an LW003-V3's Device Information service.
public struct LW003DeviceInformation: Hashable, Sendable {
    public var model: String
    public var serialNumber: String?
    public var firmware: String
    public var hardware: String
    public var software: String
    public var manufacturer: String

    public init(model: String, serialNumber: String?, firmware: String, hardware: String, software: String, manufacturer: String) {
        self.model = model
        self.serialNumber = serialNumber
        self.firmware = firmware
        self.hardware = hardware
        self.software = software
        self.manufacturer = manufacturer
    }
}
