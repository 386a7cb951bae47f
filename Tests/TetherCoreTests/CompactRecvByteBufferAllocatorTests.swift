import NIOCore
import Testing
import TetherCore

@Suite("CompactRecvByteBufferAllocator")
struct CompactRecvByteBufferAllocatorTests {
    /// The same decisions as SwiftNIO's adaptive allocator, read after read.
    @Test("sizes and growth hints agree with AdaptiveRecvByteBufferAllocator", arguments: [(64, 64, 65_536), (100, 300, 5_000), (2, 16, 1 << 20)])
    func agreesWithAdaptive(bounds: (Int, Int, Int)) {
        var compact = CompactRecvByteBufferAllocator(minimum: bounds.0, initial: bounds.1, maximum: bounds.2)
        var adaptive = AdaptiveRecvByteBufferAllocator(minimum: bounds.0, initial: bounds.1, maximum: bounds.2)
        var generator = SplitMix64(seed: UInt64(bounds.1))
        for step in 0..<5_000 {
            #expect(compact.nextBufferSize() == adaptive.nextBufferSize(), "step \(step)")
            let size = adaptive.nextBufferSize()!
            // Reads that fill the buffer, use half or less, or something in between.
            let read = [size, size, Int.random(in: 0...max(size / 2, 0), using: &generator), Int.random(in: 0...size, using: &generator)].randomElement(using: &generator)!
            let compactMayGrow = compact.record(actualReadBytes: read)
            let adaptiveMayGrow = adaptive.record(actualReadBytes: read)
            #expect(compactMayGrow == adaptiveMayGrow, "step \(step), read \(read)")
        }
        #expect(compact.buffer(allocator: ByteBufferAllocator()).capacity >= compact.nextBufferSize()!)
    }

    @Test("small enough to live inside an existential")
    func fitsInline() {
        #expect(MemoryLayout<CompactRecvByteBufferAllocator>.size <= 3 * MemoryLayout<Int>.size)
        #expect(MemoryLayout<AdaptiveRecvByteBufferAllocator>.size > 3 * MemoryLayout<Int>.size)
    }
}
