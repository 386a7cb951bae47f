import ArgumentParser
import TetherCore

/// `NAME=VALUE` arguments as the cloud's `attrs`: numbers and true/false read as JSON, anything
/// else (an enum's label) as text. The cloud checks them against the model.
enum JSONAssignments {
    static func attrs(_ assignments: [String]) throws -> JSONObject {
        var attrs: JSONObject = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("NAME=VALUE, not \(assignment)")
            }
            let text = String(assignment[assignment.index(after: equals)...])
            attrs[String(assignment[..<equals])] = (try? JSONValue.parse(text)) ?? .string(text)
        }
        return attrs
    }
}
