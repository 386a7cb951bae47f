public import NIOCore

/// SwiftNIO's `AdaptiveRecvByteBufferAllocator` (the same sizes, powers of two, and the same
/// rule: double after a read that filled the buffer, halve after two reads that used half of it
/// or less), in 13 bytes instead of 33. A channel keeps its allocator in an existential, and a
/// value larger than 24 bytes gets a heap box of its own in every channel: a server holding many
/// idle connections (an MQTT broker) pays that box per connection.
public struct CompactRecvByteBufferAllocator: RecvByteBufferAllocator, Sendable {
    private let minimum: UInt32
    private let maximum: UInt32
    private var next: UInt32
    private var decreaseNow = false

    /// Sizes are rounded as SwiftNIO's allocator rounds them: `minimum` and `initial` down to a
    /// power of two, `maximum` up; all at most 1 GiB.
    public init(minimum: Int, initial: Int, maximum: Int) {
        precondition(minimum > 0 && initial >= minimum && maximum >= initial, "0 < minimum ≤ initial ≤ maximum")
        let limit = 1 << 30
        self.minimum = UInt32(Self.powerOfTwo(atMost: min(minimum, limit)))
        self.next = UInt32(Self.powerOfTwo(atMost: min(initial, limit)))
        self.maximum = UInt32(Self.powerOfTwo(atLeast: min(maximum, limit)))
    }

    public func buffer(allocator: ByteBufferAllocator) -> ByteBuffer {
        allocator.buffer(capacity: Int(next))
    }

    public func nextBufferSize() -> Int? { Int(next) }

    public mutating func record(actualReadBytes: Int) -> Bool {
        let lower = next >> 1
        if actualReadBytes <= Int(lower), lower >= minimum {
            if decreaseNow {
                next = lower
                decreaseNow = false
            } else {
                decreaseNow = true
            }
            return false
        }
        decreaseNow = false
        if actualReadBytes >= Int(next), next < maximum {
            next <<= 1
            return true
        }
        return false
    }

    private static func powerOfTwo(atMost value: Int) -> Int {
        1 << (Int.bitWidth - 1 - value.leadingZeroBitCount)
    }

    private static func powerOfTwo(atLeast value: Int) -> Int {
        let down = powerOfTwo(atMost: value)
        return down == value ? value : down << 1
    }
}
