#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import TetherCloudClient
import TetherCore

/// Where the logged-in user's session is kept between launches of the app. The SDK ships a
/// file-based store; an iOS app can keep the session in the Keychain by conforming its own type.
public protocol SessionStore: Sendable {
    /// The stored session, if any.
    func load() throws -> CloudSession?
    /// Stores the session, or forgets it (nil).
    func save(_ session: CloudSession?) throws
}

/// A session in a JSON file readable only by its owner (mode 0600).
public struct FileSessionStore: SessionStore {
    /// The file's path; its directory is created when missing.
    public let path: String

    /// A store in the file at `path`.
    public init(path: String) { self.path = path }

    /// The stored session, nil when there is no file.
    public func load() throws -> CloudSession? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode(CloudSession.self, from: data)
    }

    /// Writes the session to a new file made with mode 0600 and moved into place; nil removes
    /// the file.
    public func save(_ session: CloudSession?) throws {
        guard let session else {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            return
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        // Created with the owner's permissions only, before the token is written into it.
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw TetherError(.invalidArgument, "cannot create \(temporary)")
        }
        try JSONEncoder().encode(session).write(to: URL(fileURLWithPath: temporary))
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
    }
}

/// A session kept in memory only: gone when the process ends.
public final class MemorySessionStore: SessionStore {
    private let stored = LockedSession()

    /// An empty store.
    public init() {}

    /// The session saved last, if any.
    public func load() throws -> CloudSession? { stored.value }
    /// Keeps `session` (nil forgets it).
    public func save(_ session: CloudSession?) throws { stored.value = session }
}

import Synchronization

final class LockedSession: Sendable {
    private let storage = Mutex<CloudSession?>(nil)
    var value: CloudSession? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
