import HummingbirdBcrypt
import NIOPosix

/// bcrypt, run on the thread pool so that a login never blocks an event loop.
struct PasswordHasher: Sendable {
    /// bcrypt's work factor; 10 costs about 60 ms per hash on one core of a small server.
    var cost: UInt8

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }
}
