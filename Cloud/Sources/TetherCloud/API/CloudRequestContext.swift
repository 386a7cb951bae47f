public import Hummingbird
public import NIOCore

/// The request context of the cloud's routes: Hummingbird's core storage and the address the
/// connection came from, which rate limits and lockouts count by.
public struct CloudRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
