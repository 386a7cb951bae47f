import NIOCore
import TetherCore

/// The two frame shapes of the Tuya local protocol (§2), below payload protection: a 55AA frame
/// with its CRC32 or HMAC-SHA256 check, or a 6699 frame sealed with AES-GCM.
///
/// ``read(from:integrity:maximumLength:)`` returns nil until a whole frame is buffered and
/// consumes nothing then; it checks the prefix, the declared length (before waiting for the
/// bytes), the suffix and the check.
struct TuyaFrame: Hashable, Sendable {
    enum Integrity: Hashable, Sendable {
        /// 55AA with zlib's CRC32 (3.1–3.3).
        case crc32
        /// 55AA with HMAC-SHA256 keyed with the session key (3.4; the local key while negotiating).
        case hmac([UInt8])
        /// 6699, AES-128-GCM under the key (3.5).
        case gcm([UInt8])
    }

    static let prefix55AA: UInt32 = 0x0000_55AA
    static let suffix55AA: UInt32 = 0x0000_AA55
    static let prefix6699: UInt32 = 0x0000_6699
    static let suffix6699: UInt32 = 0x0000_9966
    /// The largest `length` accepted by default: far above any data-point payload.
    static let defaultMaximumLength = 64 * 1024

    var sequence: UInt32
    var command: TuyaCommand
    /// 55AA: the bytes between the header and the check (a retcode, then the payload as sent);
    /// 6699: the GCM plaintext.
    var body: [UInt8]

    static func read(from buffer: inout ByteBuffer, integrity: Integrity, maximumLength: Int = defaultMaximumLength) throws(TetherError) -> TuyaFrame? {
        guard let prefix = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        switch (prefix, integrity) {
        case (prefix55AA, .crc32), (prefix55AA, .hmac):
            return try read55AA(from: &buffer, integrity: integrity, maximumLength: maximumLength)
        case (prefix6699, .gcm(let key)):
            return try read6699(from: &buffer, key: key, maximumLength: maximumLength)
        case (prefix55AA, .gcm), (prefix6699, _):
            throw TetherError(.unsupportedVersion, "a \(prefix == prefix55AA ? "55AA" : "6699") frame where the other kind was expected (wrong version?)")
        default:
            throw TetherError(.malformedFrame, "not a Tuya frame: prefix 0x\(String(prefix, radix: 16))")
        }
    }

    private static func read55AA(from buffer: inout ByteBuffer, integrity: Integrity, maximumLength: Int) throws(TetherError) -> TuyaFrame? {
        let start = buffer.readerIndex
        guard let sequence = buffer.getInteger(at: start + 4, as: UInt32.self), let command = buffer.getInteger(at: start + 8, as: UInt32.self),
            let length = buffer.getInteger(at: start + 12, as: UInt32.self)
        else { return nil }
        let checkLength = if case .crc32 = integrity { 4 } else { 32 }
        guard Int(length) >= checkLength + 4 else { throw TetherError(.malformedFrame, "a 55AA length of \(length) leaves no room for the check") }
        guard Int(length) <= maximumLength else { throw TetherError(.frameTooLarge, "a 55AA length of \(length) is above \(maximumLength)") }
        let total = 16 + Int(length)
        guard let frame = buffer.getBytes(at: start, length: total) else { return nil }
        guard frame.suffix(4) == [0, 0, 0xAA, 0x55] else { throw TetherError(.malformedFrame, "a 55AA frame without its 0000AA55 suffix") }
        let checked = frame[..<(total - 4 - checkLength)]
        let check = frame[(total - 4 - checkLength)..<(total - 4)]
        switch integrity {
        case .crc32:
            let crc = TuyaCrypto.crc32(checked)
            guard check.elementsEqual([UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]) else {
                throw TetherError(.integrityCheckFailed, "the frame's CRC32 does not match")
            }
        case .hmac(let key):
            guard TuyaCrypto.constantTimeEquals(TuyaCrypto.hmac(checked, key: key), check) else {
                throw TetherError(.integrityCheckFailed, "the frame's HMAC does not verify (forged, corrupted, or another key)")
            }
        case .gcm:
            preconditionFailure("55AA frames are not sealed with GCM")
        }
        buffer.moveReaderIndex(forwardBy: total)
        return TuyaFrame(sequence: sequence, command: TuyaCommand(rawValue: command), body: Array(frame[16..<(total - 4 - checkLength)]))
    }

    private static func read6699(from buffer: inout ByteBuffer, key: [UInt8], maximumLength: Int) throws(TetherError) -> TuyaFrame? {
        let start = buffer.readerIndex
        guard let header = buffer.getBytes(at: start, length: 18) else { return nil }
        let length = Int(header[14]) << 24 | Int(header[15]) << 16 | Int(header[16]) << 8 | Int(header[17])
        guard length >= 28 else { throw TetherError(.malformedFrame, "a 6699 length of \(length) leaves no room for the IV and tag") }
        guard length <= maximumLength else { throw TetherError(.frameTooLarge, "a 6699 length of \(length) is above \(maximumLength)") }
        guard header[4] == 0, header[5] == 0 else { throw TetherError(.malformedFrame, "a 6699 frame's reserved bytes are not zero") }
        let total = 18 + length + 4
        guard let frame = buffer.getBytes(at: start, length: total) else { return nil }
        guard frame.suffix(4) == [0, 0, 0x99, 0x66] else { throw TetherError(.malformedFrame, "a 6699 frame without its 00009966 suffix") }
        let sealed = frame[18..<(18 + length)]
        let plaintext = try TuyaCrypto.gcmOpen(
            iv: sealed.prefix(12), ciphertext: sealed.dropFirst(12).dropLast(16), tag: sealed.suffix(16), key: key, aad: Array(header[4..<18]))
        buffer.moveReaderIndex(forwardBy: total)
        let sequence = UInt32(header[6]) << 24 | UInt32(header[7]) << 16 | UInt32(header[8]) << 8 | UInt32(header[9])
        let command = UInt32(header[10]) << 24 | UInt32(header[11]) << 16 | UInt32(header[12]) << 8 | UInt32(header[13])
        return TuyaFrame(sequence: sequence, command: TuyaCommand(rawValue: command), body: plaintext)
    }

    /// The frame's bytes; `iv` (12 bytes) only for GCM.
    func write(to buffer: inout ByteBuffer, integrity: Integrity, iv: [UInt8]? = nil) throws(TetherError) {
        switch integrity {
        case .crc32, .hmac:
            let checkLength = if case .crc32 = integrity { 4 } else { 32 }
            var head = ByteBuffer()
            head.writeInteger(Self.prefix55AA)
            head.writeInteger(sequence)
            head.writeInteger(command.rawValue)
            head.writeInteger(UInt32(body.count + checkLength + 4))
            head.writeBytes(body)
            let checked = Array(head.readableBytesView)
            buffer.writeBytes(checked)
            switch integrity {
            case .crc32: buffer.writeInteger(TuyaCrypto.crc32(checked))
            case .hmac(let key): buffer.writeBytes(TuyaCrypto.hmac(checked, key: key))
            case .gcm: break
            }
            buffer.writeInteger(Self.suffix55AA)
        case .gcm(let key):
            guard let iv, iv.count == 12 else { throw TetherError(.invalidArgument, "a 6699 frame needs a 12-byte IV") }
            var aad = ByteBuffer()
            aad.writeInteger(UInt16(0))
            aad.writeInteger(sequence)
            aad.writeInteger(command.rawValue)
            aad.writeInteger(UInt32(12 + body.count + 16))
            let sealed = try TuyaCrypto.gcmSeal(body, key: key, iv: iv, aad: Array(aad.readableBytesView))
            buffer.writeInteger(Self.prefix6699)
            buffer.writeBuffer(&aad)
            buffer.writeBytes(sealed)
            buffer.writeInteger(Self.suffix6699)
        }
    }
}
