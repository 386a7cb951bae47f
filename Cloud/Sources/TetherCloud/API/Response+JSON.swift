import Hummingbird
import NIOCore
import TetherCore

extension Response {
    /// A JSON answer. Bodies are built as `JSONValue` so that keys keep the reference's order.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: value.serialized()))
        )
    }

    /// The empty object that endpoints marked "—" in the reference answer.
    static var emptyJSON: Response { .json(.object([:])) }
}
