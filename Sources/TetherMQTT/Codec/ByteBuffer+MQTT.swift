import NIOCore
import TetherCore

extension ByteBuffer {
    @discardableResult
    mutating func mqttWriteVarint(_ value: Int) -> Int {
        VariableByteInteger.write(value, to: &self)
    }

    static func mqttVarintSize(_ value: Int) -> Int { VariableByteInteger.size(of: value) }

    func mqttGetVarint(at index: Int) throws(MQTTError) -> VariableByteInteger.Read {
        let read = VariableByteInteger.read(from: self, at: index)
        if read == .tooLong { throw .malformed("variable byte integer longer than 4 bytes") }
        return read
    }

    /// Reads a variable byte integer that must be complete (inside a packet whose length is known).
    mutating func mqttReadVarint() throws(MQTTError) -> Int {
        guard case let .value(value, byteCount: count) = try mqttGetVarint(at: readerIndex) else {
            throw .malformed("truncated variable byte integer")
        }
        moveReaderIndex(forwardBy: count)
        return value
    }

    mutating func mqttReadByte(_ field: String) throws(MQTTError) -> UInt8 {
        guard let value = readInteger(as: UInt8.self) else { throw .malformed("truncated \(field)") }
        return value
    }

    mutating func mqttReadUInt16(_ field: String) throws(MQTTError) -> UInt16 {
        guard let value = readInteger(as: UInt16.self) else { throw .malformed("truncated \(field)") }
        return value
    }

    mutating func mqttReadUInt32(_ field: String) throws(MQTTError) -> UInt32 {
        guard let value = readInteger(as: UInt32.self) else { throw .malformed("truncated \(field)") }
        return value
    }

    /// Binary Data: u16 length, bytes.
    mutating func mqttReadBinary(_ field: String) throws(MQTTError) -> [UInt8] {
        let length = try mqttReadUInt16(field)
        guard let bytes = readBytes(length: Int(length)) else { throw .malformed("truncated \(field)") }
        return bytes
    }

    /// UTF-8 Encoded String: u16 length, well-formed UTF-8 without U+0000 (MQTT §1.5.4).
    /// Validated straight from the buffer, without an intermediate array.
    mutating func mqttReadString(_ field: String) throws(MQTTError) -> String {
        let length = Int(try mqttReadUInt16(field))
        guard readableBytes >= length else { throw .malformed("truncated \(field)") }
        // One pass over the bytes: ASCII (topics, client ids, almost every string a broker
        // sees) needs no further check, and is decoded without the validating initializer,
        // whose generic code looks up type metadata on each call.
        enum Scan {
            case ascii(String)
            case containsNull
            case beyondASCII
        }
        let scan = withUnsafeReadableBytes { raw -> Scan in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[..<length])
            var ascii = true
            for byte in bytes {
                if byte == 0 { return .containsNull }
                if byte >= 0x80 { ascii = false }
            }
            return ascii ? .ascii(String(decoding: bytes, as: UTF8.self)) : .beyondASCII
        }
        let decoded: String
        switch scan {
        case .ascii(let string):
            decoded = string
        case .containsNull:
            throw .malformed("\(field) contains U+0000")
        case .beyondASCII:
            guard let string = String(validating: readableBytesView.prefix(length), as: UTF8.self) else {
                throw .malformed("\(field) is not well-formed UTF-8")
            }
            decoded = string
        }
        moveReaderIndex(forwardBy: length)
        return decoded
    }

    static func mqttValidatedString(_ bytes: [UInt8], field: String) throws(MQTTError) -> String {
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw .malformed("\(field) is not well-formed UTF-8")
        }
        guard !bytes.contains(0) else { throw .malformed("\(field) contains U+0000") }
        return string
    }

    mutating func mqttWriteString(_ string: String, _ field: String) throws(MQTTError) {
        try mqttWriteBinary(string.utf8, field)
    }

    mutating func mqttWriteBinary(_ bytes: some Collection<UInt8>, _ field: String) throws(MQTTError) {
        guard bytes.count <= Int(UInt16.max) else {
            throw MQTTError(.invalidArgument, "\(field) is \(bytes.count) bytes; MQTT allows at most 65,535")
        }
        writeInteger(UInt16(bytes.count))
        writeBytes(bytes)
    }
}
