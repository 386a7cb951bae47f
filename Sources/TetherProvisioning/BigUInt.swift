/// Unsigned integers of a few thousand bits, for SRP-6a: big-endian bytes in and out, the few
/// plain operations SRP needs, and arithmetic modulo an odd modulus through Montgomery
/// multiplication. Not constant-time: the exponents include the password-derived x on the app's
/// side, so a peer that can time many sessions learns something; a constant-time ladder is noted
/// as future work.
struct BigUInt: Hashable, Sendable, Comparable {
    /// Little-endian 64-bit limbs, without high zero limbs (zero is empty).
    private(set) var limbs: [UInt64]

    init(limbs: [UInt64]) {
        self.limbs = limbs
        normalize()
    }

    init(_ value: UInt64) { self.init(limbs: [value]) }

    /// From big-endian bytes.
    init(bytes: some Collection<UInt8>) {
        var limbs: [UInt64] = []
        var current: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes.reversed() {
            current |= UInt64(byte) << shift
            shift += 8
            if shift == 64 {
                limbs.append(current)
                current = 0
                shift = 0
            }
        }
        if shift > 0 { limbs.append(current) }
        self.init(limbs: limbs)
    }

    private mutating func normalize() {
        while let last = limbs.last, last == 0 { limbs.removeLast() }
    }

    var isZero: Bool { limbs.isEmpty }

    /// Minimal big-endian bytes (`[0]` for zero, as Python's `long_to_bytes`).
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        for limb in limbs.reversed() {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift))) }
        }
        let first = bytes.firstIndex { $0 != 0 } ?? bytes.count
        let minimal = Array(bytes[first...])
        return minimal.isEmpty ? [0] : minimal
    }

    /// Big-endian bytes left-padded with zeros to `length`.
    func padded(to length: Int) -> [UInt8] {
        let minimal = isZero ? [] : bytes
        return [UInt8](repeating: 0, count: max(0, length - minimal.count)) + minimal
    }

    var bitWidth: Int { limbs.isEmpty ? 0 : limbs.count * 64 - limbs.last!.leadingZeroBitCount }

    func bit(_ index: Int) -> Bool {
        let limb = index / 64
        return limb < limbs.count && (limbs[limb] >> UInt64(index % 64)) & 1 == 1
    }

    static func < (lhs: BigUInt, rhs: BigUInt) -> Bool {
        if lhs.limbs.count != rhs.limbs.count { return lhs.limbs.count < rhs.limbs.count }
        for index in lhs.limbs.indices.reversed() where lhs.limbs[index] != rhs.limbs[index] { return lhs.limbs[index] < rhs.limbs[index] }
        return false
    }

    static func + (lhs: BigUInt, rhs: BigUInt) -> BigUInt {
        var result = [UInt64](repeating: 0, count: max(lhs.limbs.count, rhs.limbs.count) + 1)
        var carry: UInt64 = 0
        for index in 0..<(result.count - 1) {
            let (a, b) = (index < lhs.limbs.count ? lhs.limbs[index] : 0, index < rhs.limbs.count ? rhs.limbs[index] : 0)
            let (sum1, overflow1) = a.addingReportingOverflow(b)
            let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
            result[index] = sum2
            carry = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
        }
        result[result.count - 1] = carry
        return BigUInt(limbs: result)
    }

    /// `lhs - rhs`, for `lhs >= rhs`.
    static func - (lhs: BigUInt, rhs: BigUInt) -> BigUInt {
        precondition(lhs >= rhs, "BigUInt subtraction below zero")
        var result = lhs.limbs
        var borrow: UInt64 = 0
        for index in result.indices {
            let b = index < rhs.limbs.count ? rhs.limbs[index] : 0
            let (difference1, overflow1) = result[index].subtractingReportingOverflow(b)
            let (difference2, overflow2) = difference1.subtractingReportingOverflow(borrow)
            result[index] = difference2
            borrow = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
        }
        return BigUInt(limbs: result)
    }

    static func * (lhs: BigUInt, rhs: BigUInt) -> BigUInt {
        guard !lhs.isZero, !rhs.isZero else { return BigUInt(limbs: []) }
        var result = [UInt64](repeating: 0, count: lhs.limbs.count + rhs.limbs.count)
        for i in lhs.limbs.indices {
            var carry: UInt64 = 0
            for j in rhs.limbs.indices {
                let (high, low) = lhs.limbs[i].multipliedFullWidth(by: rhs.limbs[j])
                let (sum1, overflow1) = low.addingReportingOverflow(result[i + j])
                let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
                result[i + j] = sum2
                carry = high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
            }
            result[i + rhs.limbs.count] = carry
        }
        return BigUInt(limbs: result)
    }
}

/// Arithmetic modulo an odd `modulus` (Montgomery form inside; values in and out are plain).
struct MontgomeryField: Sendable {
    let modulus: BigUInt
    private let count: Int
    /// −modulus⁻¹ mod 2⁶⁴.
    private let inverse: UInt64
    /// R² mod modulus, R = 2^(64·count).
    private let rSquared: BigUInt

    init(modulus: BigUInt) {
        precondition(modulus.limbs.first.map { $0 & 1 == 1 } == true, "a Montgomery modulus is odd")
        self.modulus = modulus
        count = modulus.limbs.count
        var inverse: UInt64 = 1
        for _ in 0..<6 { inverse = inverse &* (2 &- modulus.limbs[0] &* inverse) }
        self.inverse = 0 &- inverse
        var r = BigUInt(1)
        for _ in 0..<(2 * 64 * count) {
            r = r + r
            if r >= modulus { r = r - modulus }
        }
        rSquared = r
    }

    /// `value mod modulus`, for values below R (any value of at most the modulus's limbs).
    func reduce(_ value: BigUInt) -> BigUInt { fromMontgomery(montgomery(value, rSquared)) }

    func multiply(_ a: BigUInt, _ b: BigUInt) -> BigUInt { fromMontgomery(montgomery(montgomery(a, rSquared), montgomery(b, rSquared))) }

    func add(_ a: BigUInt, _ b: BigUInt) -> BigUInt {
        let sum = a + b
        return sum >= modulus ? sum - modulus : sum
    }

    /// `(a − b) mod modulus`, for reduced `a` and `b`.
    func subtract(_ a: BigUInt, _ b: BigUInt) -> BigUInt { a >= b ? a - b : a + modulus - b }

    /// `base^exponent mod modulus`, the exponent of any size.
    func power(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt {
        var result = montgomery(BigUInt(1), rSquared)
        let montgomeryBase = montgomery(reduce(base), rSquared)
        for index in stride(from: exponent.bitWidth - 1, through: 0, by: -1) {
            result = montgomery(result, result)
            if exponent.bit(index) { result = montgomery(result, montgomeryBase) }
        }
        return fromMontgomery(result)
    }

    private func fromMontgomery(_ value: BigUInt) -> BigUInt { montgomery(value, BigUInt(1)) }

    /// a·b·R⁻¹ mod modulus (CIOS), for a, b below R with a·b < modulus·R.
    private func montgomery(_ a: BigUInt, _ b: BigUInt) -> BigUInt {
        let n = modulus.limbs
        var t = [UInt64](repeating: 0, count: count + 2)
        for i in 0..<count {
            let ai = i < a.limbs.count ? a.limbs[i] : 0
            var carry: UInt64 = 0
            for j in 0..<count {
                let bj = j < b.limbs.count ? b.limbs[j] : 0
                let (high, low) = ai.multipliedFullWidth(by: bj)
                let (sum1, overflow1) = low.addingReportingOverflow(t[j])
                let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
                t[j] = sum2
                carry = high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
            }
            let (top, topOverflow) = t[count].addingReportingOverflow(carry)
            t[count] = top
            t[count + 1] = topOverflow ? 1 : 0
            let m = t[0] &* inverse
            var (high, low) = m.multipliedFullWidth(by: n[0])
            let (_, firstOverflow) = low.addingReportingOverflow(t[0])
            carry = high &+ (firstOverflow ? 1 : 0)
            for j in 1..<count {
                (high, low) = m.multipliedFullWidth(by: n[j])
                let (sum1, overflow1) = low.addingReportingOverflow(t[j])
                let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
                t[j - 1] = sum2
                carry = high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
            }
            let (last, lastOverflow) = t[count].addingReportingOverflow(carry)
            t[count - 1] = last
            t[count] = t[count + 1] &+ (lastOverflow ? 1 : 0)
        }
        let result = BigUInt(limbs: Array(t[0...count]))
        return result >= modulus ? result - modulus : result
    }
}
