/// Finds where a request head ends in bytes as they arrive, without parsing it: at the empty
/// line after the first non-empty one (CRLF CRLF, or bare LFs, which HTTP parsers also take).
/// Empty lines before the request line, which parsers skip, do not end it.
struct RequestHeadScanner: Sendable, Equatable {
    enum Outcome: Sendable, Equatable {
        case needMore
        /// The head ends `offset` bytes into the chunk just given.
        case complete(offset: Int)
        /// More than the limit arrived without the head ending.
        case tooLarge
    }

    let limit: Int
    private(set) var count = 0
    private var sawContent = false
    /// 0: inside a line; 1: at the start of a line; 2: a CR at the start of a line.
    private var lineState: UInt8 = 1

    init(limit: Int) { self.limit = limit }

    mutating func scan(_ bytes: some Sequence<UInt8>) -> Outcome {
        var offset = 0
        for byte in bytes {
            offset += 1
            count += 1
            switch (lineState, byte) {
            case (1, UInt8(ascii: "\n")), (2, UInt8(ascii: "\n")):
                if sawContent { return .complete(offset: offset) }
                lineState = 1
            case (1, UInt8(ascii: "\r")):
                lineState = 2
            case (_, UInt8(ascii: "\n")):
                lineState = 1
            case (_, UInt8(ascii: "\r")):
                lineState = 0
            default:
                sawContent = true
                lineState = 0
            }
            if count > limit { return .tooLarge }
        }
        return .needMore
    }
}
