import Crypto
import TetherCore
import _CryptoExtras

/// The primitives of the Tuya local protocol: AES-128-ECB with PKCS#7 (3.1–3.4), AES-128-GCM
/// (3.5), HMAC-SHA256 (3.4 frames, the negotiation), MD5 (3.1 signatures, the UDP key) and
/// zlib's CRC32 (3.1–3.3 frames). ECB is the protocol's, not a choice.
enum TuyaCrypto {
    static func checkKey(_ key: [UInt8]) throws(TetherError) {
        guard key.count == 16 else { throw TetherError(.invalidArgument, "a Tuya key is 16 bytes, not \(key.count)") }
    }

    static func ecbEncrypt(_ plaintext: [UInt8], key: [UInt8], padding: Bool = true) throws(TetherError) -> [UInt8] {
        try checkKey(key)
        var data = plaintext
        if padding {
            let pad = 16 - data.count % 16
            data += [UInt8](repeating: UInt8(pad), count: pad)
        }
        guard data.count % 16 == 0 else { throw TetherError(.invalidArgument, "unpadded ECB input is whole blocks") }
        let symmetric = SymmetricKey(data: key)
        var output: [UInt8] = []
        output.reserveCapacity(data.count)
        for start in stride(from: 0, to: data.count, by: 16) {
            var block = Array(data[start..<start + 16])
            do { try AES.permute(&block, key: symmetric) } catch { throw TetherError(.invalidArgument, "AES failed: \(error)") }
            output += block
        }
        return output
    }

    static func ecbDecrypt(_ ciphertext: some Collection<UInt8>, key: [UInt8], padding: Bool = true) throws(TetherError) -> [UInt8] {
        try checkKey(key)
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw TetherError(.decryptionFailed, "\(ciphertext.count) bytes are not whole AES blocks")
        }
        let symmetric = SymmetricKey(data: key)
        let input = Array(ciphertext)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        for start in stride(from: 0, to: input.count, by: 16) {
            var block = Array(input[start..<start + 16])
            do { try AES.inversePermute(&block, key: symmetric) } catch { throw TetherError(.invalidArgument, "AES failed: \(error)") }
            output += block
        }
        guard padding else { return output }
        guard let pad = output.last, (1...16).contains(pad), output.suffix(Int(pad)).allSatisfy({ $0 == pad }) else {
            throw TetherError(.decryptionFailed, "the payload does not decrypt with this key (bad padding)")
        }
        return Array(output.dropLast(Int(pad)))
    }

    /// `IV ‖ ciphertext ‖ tag`.
    static func gcmSeal(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], aad: [UInt8]) throws(TetherError) -> [UInt8] {
        try checkKey(key)
        do {
            let sealed = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: iv), authenticating: aad)
            return iv + Array(sealed.ciphertext) + Array(sealed.tag)
        } catch {
            throw TetherError(.invalidArgument, "GCM sealing failed: \(error)")
        }
    }

    static func gcmOpen(
        iv: some Collection<UInt8>, ciphertext: some Collection<UInt8>, tag: some Collection<UInt8>, key: [UInt8], aad: [UInt8]
    )
        throws(TetherError) -> [UInt8]
    {
        try checkKey(key)
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: Array(iv)), ciphertext: Array(ciphertext), tag: Array(tag))
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: aad))
        } catch {
            throw TetherError(.integrityCheckFailed, "the GCM tag does not verify (forged, corrupted, or another key)")
        }
    }

    static func hmac(_ message: some Collection<UInt8>, key: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(message), using: SymmetricKey(data: key)))
    }

    static func md5(_ bytes: [UInt8]) -> [UInt8] { Array(Insecure.MD5.hash(data: bytes)) }

    /// Compares two byte strings in time independent of where they differ.
    static func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
        return difference == 0
    }

    private static let crcTable: [UInt32] = (0..<256).map { index -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// zlib's CRC32 (IEEE 802.3).
    static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

extension TuyaCrypto {
    /// `count` random bytes from the system's generator, eight at a time: one call per word
    /// rather than per byte (each call reads the kernel's generator).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        return Array(bytes.prefix(count))
    }
}
