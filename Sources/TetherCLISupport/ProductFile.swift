import Foundation
public import TetherCore

/// Reads a product model file (Gizwits data points or Aliyun TSL) named on the command line.
public func loadProduct(_ path: String) throws -> ThingModel {
    let data: Data
    do {
        data = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
        throw TetherError(.invalidArgument, "cannot read the product file \(path)")
    }
    return try ThingModel(productJSON: Array(data))
}
