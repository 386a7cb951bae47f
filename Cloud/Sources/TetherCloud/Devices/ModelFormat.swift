public import TetherCore

/// The two documents a product model is imported from.
public enum ModelFormat: String, Sendable, CaseIterable {
    /// The Gizwits data-point JSON (`entities[0].attrs`).
    case gizwits
    /// The Aliyun Link thing-specification language.
    case tsl

    public func load(_ bytes: [UInt8]) throws(TetherError) -> ThingModel {
        switch self {
        case .gizwits: try ThingModel(gizwitsJSON: bytes)
        case .tsl: try ThingModel(tslJSON: bytes)
        }
    }

    func serialize(_ model: ThingModel) throws(TetherError) -> String {
        switch self {
        case .gizwits: try model.gizwitsJSON().serialized()
        case .tsl: model.tslJSON().serialized()
        }
    }
}
