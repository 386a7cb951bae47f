import Testing
import TetherCore

/// Bytes written as the reference writes them: hex pairs, spaces allowed.
func hex(_ text: String) -> [UInt8] { [UInt8](tetherHex: text)! }

/// Expects `body` to throw a `TetherError` with `code`.
func expectError<T>(_ code: TetherError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) {
    let error = #expect(throws: TetherError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}
