// swift-tools-version:6.1
import PackageDescription

// Benchmarks live in their own package so that the SDK never resolves their dependencies.
// Run: swift run -c release --package-path Benchmarks tether-benchmarks
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "TetherBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "Tether", path: ".."),
        .package(name: "TetherCloud", path: "../Cloud"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        // The cloud's gateway under load (scripts/bench-gateway.sh runs it against a server process).
        .executableTarget(
            name: "tether-cloud-benchmarks",
            dependencies: [
                .product(name: "TetherCloud", package: "TetherCloud"),
                .product(name: "TetherAlink", package: "Tether"),
                .product(name: "TetherMQTT", package: "Tether"),
                .product(name: "TetherCore", package: "Tether"),
                .product(name: "TetherCloudProtocol", package: "Tether"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // SwiftNIO alone, for the broker's memory per idle connection (scripts/bench-mqtt.sh).
        .executableTarget(
            name: "mqtt-idle-floor",
            dependencies: [
                .product(name: "TetherCore", package: "Tether"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "tether-benchmarks",
            dependencies: [
                .product(name: "Tether", package: "Tether"),
                .product(name: "TetherAgent", package: "Tether"),
                .product(name: "TetherBluetooth", package: "Tether"),
                .product(name: "TetherBlueZ", package: "Tether"),
                .product(name: "TetherDBus", package: "Tether"),
                .product(name: "TetherCore", package: "Tether"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        )
    ]
)
