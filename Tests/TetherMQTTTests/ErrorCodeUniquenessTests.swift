import Foundation
import Testing
import TetherCore
import TetherMQTT
import TetherTestSupport

/// An error's code identifies it across the package: an app that logs or matches codes must
/// never meet one number meaning two things.
@Suite("Error codes")
struct ErrorCodeUniquenessTests {
    @Test("every code declared anywhere in Sources/ has its own number; names are unique within their error type")
    func unique() throws {
        // Declarations are `Self(NUMBER, "name")` inside `extension ErrorCode where Domain == …`.
        let pattern = try NSRegularExpression(pattern: #"Self\((\d+), "([A-Za-z]+)"\)"#)
        var numbers: [Int: String] = [:]
        var found = 0
        let sources = Fixtures.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            guard text.contains("extension ErrorCode") else { continue }
            // A name means one code within its type (`TetherError.Code.timeout`, `MQTTError.Code.timeout`).
            var names: [String: Int] = [:]
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let number = Int(text[Range(match.range(at: 1), in: text)!])!
                let name = String(text[Range(match.range(at: 2), in: text)!])
                found += 1
                #expect(numbers[number] == nil, "\(number) is both \(numbers[number] ?? "") and \(name)")
                #expect(names[name] == nil, "\(name) is both \(names[name] ?? 0) and \(number)")
                numbers[number] = name
                names[name] = number
            }
        }
        #expect(found >= 40, "the scan found \(found) codes: it no longer reads the declarations")
        // Spot checks that the scan sees what the types say.
        #expect(numbers[TetherError.Code.notLoggedIn.rawValue] == "notLoggedIn")
        #expect(numbers[MQTTError.Code.protocolError.rawValue] == "protocolError")
    }
}
