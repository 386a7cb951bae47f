extension TetherClient {
    /// Sharing devices and the message centre, with the logged-in user's session (the
    /// Gizwits SDK's `GizDeviceSharing`).
    public var sharing: DeviceSharing { DeviceSharing(client: self) }
}

/// Invitations to use devices, the QR flow and the message centre. Every call needs a logged-in
/// user; errors carry the cloud's code (`TetherError.cloudCode`). New messages also arrive as
/// ``TetherClientEvent/message(_:)`` while the real-time connection is up.
public struct DeviceSharing: Sendable {
    let client: TetherClient

    /// Invites a user to a device you own; returns the invitation's id.
    @discardableResult
    public func invite(_ receiver: TetherCloudAPI.SharingReceiver, to did: String, for duration: Duration? = nil) async throws(TetherError) -> Int64 {
        try await call { api, session throws(TetherError) in try await api.share(session, did: did, with: receiver, duration: duration) }
    }

    /// A QR-code invitation to a device you own: the text to show (valid 15 minutes, once).
    public func qrCode(for did: String, duration: Duration? = nil) async throws(TetherError) -> (id: Int64, qrContent: String) {
        try await call { api, session throws(TetherError) in try await api.shareByQRCode(session, did: did, duration: duration) }
    }

    /// Invitations you sent (`sent`) or received.
    public func invitations(sent: Bool, status: SharingInvitation.Status? = nil) async throws(TetherError) -> [SharingInvitation] {
        try await call { api, session throws(TetherError) in try await api.invitations(session, sent: sent, status: status) }
    }

    /// Accepts or refuses an invitation you received; an accepted device joins ``TetherClient/devices``.
    public func answer(_ id: Int64, accept: Bool) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.answerInvitation(session, id: id, accept: accept) }
        if accept { _ = try await client.refreshBindings() }
    }

    /// Accepts the invitation a scanned QR code holds.
    public func accept(qrContent: String) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.acceptInvitation(session, qrContent: qrContent) }
        _ = try await client.refreshBindings()
    }

    /// Cancels a pending invitation you sent, or revokes an accepted one.
    public func cancel(_ id: Int64) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.cancelInvitation(session, id: id) }
    }

    /// Hands a device you own to one of its guests.
    public func transfer(_ did: String, to uid: String) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.transfer(session, did: did, to: uid) }
        _ = try await client.refreshBindings()
    }

    /// Your message centre, newest first.
    public func messages(limit: Int = 20, skip: Int = 0) async throws(TetherError) -> [CloudMessage] {
        try await call { api, session throws(TetherError) in try await api.messages(session, limit: limit, skip: skip) }
    }

    /// Marks a message read, or deletes it.
    public func markMessage(_ id: Int64, delete: Bool = false) async throws(TetherError) {
        try await call { api, session throws(TetherError) in try await api.markMessage(session, id: id, delete: delete) }
    }

    private func call<Result: Sendable>(_ body: (TetherCloudAPI, CloudSession) async throws(TetherError) -> Result) async throws(TetherError) -> Result {
        try await client.withCloudSession(body)
    }
}

extension TetherClient {
    /// The user's message centre: sharing (type 1), device alerts, faults and disconnections
    /// (2–4, for the devices the user asked about) and homes (5).
    public var messages: MessageCentre { MessageCentre(sharing: DeviceSharing(client: self)) }
}

/// The message centre (Gizwits Open API §2.2). New messages also arrive as
/// ``TetherClientEvent/message(_:)`` while the real-time connection is up.
public struct MessageCentre: Sendable {
    let sharing: DeviceSharing

    /// Your messages, newest first.
    public func list(limit: Int = 20, skip: Int = 0) async throws(TetherError) -> [CloudMessage] {
        try await sharing.messages(limit: limit, skip: skip)
    }

    /// Marks a message read, or deletes it.
    public func mark(_ id: Int64, delete: Bool = false) async throws(TetherError) {
        try await sharing.markMessage(id, delete: delete)
    }
}
