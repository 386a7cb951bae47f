/// Something that happened to a ``TetherClient`` as a whole (``TetherClient/events()``).
public enum TetherClientEvent: Sendable {
    /// The user's session changed: logged in, renewed, logged out, or over (`GizEventToken`).
    case account(AccountEvent)
    /// The real-time connection to the cloud is up (again): devices bound to the user can be
    /// controlled through it (`GizEventM2MService`).
    case cloudConnected
    /// The real-time connection to the cloud dropped, with the reason when there is one; the
    /// client reconnects on its own.
    case cloudDisconnected(TetherError?)
    /// A device's ``NetStatus`` changed (`GizEventDevice`); ``Device/events()`` has the same.
    case deviceNetStatus(Device, NetStatus)
    /// A new entry of the user's message centre: an invitation arrived, was answered, cancelled
    /// or revoked (Tether's `s2c_message`).
    case message(CloudMessage)
    /// A device presented one of the user's pairing tokens (Tether's `s2c_pairing`): bound (the
    /// device is in the list by then), or refused and why.
    case pairing(PairingStatus)
    /// One of the user's schedules was created, changed or deleted, by this app or another of
    /// the user's sessions (Tether's `s2c_schedules`; the Gizwits SDK's `didUpdateSchedulers`).
    case schedules(ScheduleChange)
    /// Background work of the client failed (LAN discovery could not open its socket, …)
    /// (`GizEventSDK`).
    case error(TetherError)
}
