// swift-tools-version:6.1
import PackageDescription

// Every target is built in Swift 6 mode with these upcoming features (see DEVELOPERS.md).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Tether",
    // These floors give the `Synchronization` module (Mutex, Atomic) everywhere.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Tether", targets: ["Tether"]),
        .library(name: "TetherCore", targets: ["TetherCore"]),
        .library(name: "TetherGizwitsLAN", targets: ["TetherGizwitsLAN"]),
        .library(name: "TetherTuyaLAN", targets: ["TetherTuyaLAN"]),
        .library(name: "TetherProvisioning", targets: ["TetherProvisioning"]),
        .library(name: "TetherAgent", targets: ["TetherAgent"]),
        .library(name: "TetherMQTT", targets: ["TetherMQTT"]),
        .library(name: "TetherAlink", targets: ["TetherAlink"]),
        .library(name: "TetherCloudClient", targets: ["TetherCloudClient"]),
        .library(name: "TetherCloudProtocol", targets: ["TetherCloudProtocol"]),
        .library(name: "TetherTesting", targets: ["TetherTesting"]),
        .library(name: "TetherBluetooth", targets: ["TetherBluetooth"]),
        .library(name: "TetherDBus", targets: ["TetherDBus"]),
        .library(name: "TetherBlueZ", targets: ["TetherBlueZ"]),
        .library(name: "TetherCoreBluetooth", targets: ["TetherCoreBluetooth"]),
        .executable(name: "tether", targets: ["tether"]),
        .executable(name: "tether-agent", targets: ["tether-agent"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // HMAC for Alink's signed CONNECT; CryptoKit underneath on Apple platforms.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(
            name: "TetherCore",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "DequeModule", package: "swift-collections")]
        ),
        // What the SDK and the cloud say to each other: M2M frames, Open API bodies and errors.
        .target(name: "TetherCloudProtocol", dependencies: ["TetherCore"]),
        .target(
            name: "TetherGizwitsLAN",
            dependencies: [
                "TetherCore",
                // Ed25519 for the LAN grants (LANGrant) a cloud signs and a device verifies.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The Tuya local protocol 3.1–3.5 (shared/reference/tuya-lan.md): frames, keys, sessions, discovery.
        .target(
            name: "TetherTuyaLAN",
            dependencies: [
                "TetherCore",
                .product(name: "Crypto", package: "swift-crypto"),
                // AES single-block permutation: Tuya's ECB.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Wi-Fi onboarding as values: the smart-config encoders and decoders (ESP-Touch v1/v2, AirKiss).
        .target(
            name: "TetherProvisioning",
            dependencies: [
                "TetherCore",
                .product(name: "Crypto", package: "swift-crypto"),
                // AES-CBC: ESP-Touch v2's encryption.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The client side of the WebSocket upgrade, shared by TetherMQTT and TetherCloudClient.
        .target(
            name: "TetherWebSocketClient",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .target(
            name: "TetherMQTT",
            dependencies: [
                "TetherCore",
                "TetherWebSocketClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // TLS with BoringSSL on every platform, Apple's included: the code CI compiles
                // is the code that ships.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TetherAlink",
            dependencies: [
                "TetherCore",
                "TetherMQTT",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                // Firmware downloads (HTTP, HTTPS).
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TetherCloudClient",
            dependencies: [
                "TetherCloudProtocol",
                "TetherCore",
                "TetherWebSocketClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Tether",
            dependencies: [
                "TetherCore",
                "TetherGizwitsLAN",
                "TetherTuyaLAN",
                "TetherProvisioning",
                "TetherCloudClient",
                "TetherCloudProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TetherAgent",
            dependencies: [
                "TetherCore",
                "TetherBluetooth",
                "TetherGizwitsLAN",
                "TetherTuyaLAN",
                "TetherProvisioning",
                "TetherAlink",
                "TetherMQTT",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A pure-Swift D-Bus client on SwiftNIO (the wire protocol over a Unix socket): how the SDK
        // talks to BlueZ without a system library.
        .target(
            name: "TetherDBus",
            dependencies: [
                "TetherCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Bluetooth LE: the central every adapter maps, and the device profiles (LW003-V3, DIoT)
        // as pure codecs and typed APIs over it.
        .target(
            name: "TetherBluetooth",
            dependencies: [
                "TetherCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The central on Linux: BlueZ over D-Bus.
        .target(
            name: "TetherBlueZ",
            dependencies: ["TetherBluetooth", "TetherDBus", "TetherCore", .product(name: "Logging", package: "swift-log")]
        ),
        // The central on Apple platforms: CoreBluetooth, in its own target so that it can never
        // break the rest (its sources are empty where CoreBluetooth cannot be imported).
        .target(
            name: "TetherCoreBluetooth",
            dependencies: ["TetherBluetooth", "TetherCore", .product(name: "Logging", package: "swift-log")]
        ),
        // Virtual devices in-process, for apps' own tests.
        .target(
            name: "TetherTesting",
            dependencies: ["Tether", "TetherAgent", "TetherAlink", "TetherBluetooth", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "TetherCLISupport", dependencies: ["TetherCore"]),
        .executableTarget(
            name: "tether",
            dependencies: [
                "Tether",
                "TetherBluetooth",
                "TetherBlueZ",
                "TetherDBus",
                "TetherAgent",
                "TetherMQTT",
                "TetherCLISupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "tether-agent",
            dependencies: [
                "TetherAgent",
                "TetherBluetooth",
                "TetherBlueZ",
                "TetherDBus",
                "TetherAlink",
                "TetherTuyaLAN",
                "TetherCLISupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TetherTestSupport",
            dependencies: [
                "TetherCore", "TetherGizwitsLAN", "TetherAgent", "TetherMQTT", "TetherAlink", "TetherTuyaLAN", "TetherProvisioning",
                "TetherDBus", "TetherBluetooth",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TetherTestSupport"
        ),
        // The fuzz harness: a libFuzzer binary when built by scripts/fuzz.sh, a corpus replayer otherwise.
        .executableTarget(name: "tether-fuzz", dependencies: ["TetherTestSupport"]),
        .testTarget(name: "TetherCoreTests", dependencies: ["TetherCore", "TetherTestSupport", .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(
            name: "TetherGizwitsLANTests",
            dependencies: [
                "TetherGizwitsLAN",
                "TetherTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "TetherTuyaLANTests",
            dependencies: [
                "TetherTuyaLAN", "TetherTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "TetherProvisioningTests", dependencies: ["TetherProvisioning", "TetherTestSupport", "TetherCore"]),
        .testTarget(
            name: "TetherDBusTests",
            dependencies: [
                "TetherDBus", "TetherCore", "TetherTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "TetherBluetoothTests",
            dependencies: [
                "TetherBluetooth", "TetherBlueZ", "TetherDBus", "TetherCore", "TetherTestSupport", .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "TetherCloudProtocolTests", dependencies: ["TetherCloudProtocol", "TetherCore"]),
        .testTarget(name: "TetherTests", dependencies: ["Tether", "TetherCloudClient", "TetherCloudProtocol", "TetherCore"]),
        .testTarget(
            name: "TetherMQTTTests",
            dependencies: [
                "TetherMQTT",
                "TetherCore",
                "TetherTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "TetherAlinkTests",
            dependencies: [
                "TetherAlink",
                "TetherMQTT",
                "TetherTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "TetherAgentTests",
            dependencies: [
                "TetherAgent", "TetherTestSupport", .product(name: "NIOCore", package: "swift-nio"), .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "Tether",
                "TetherBluetooth",
                "TetherCloudClient",
                "TetherTesting",
                "TetherAlink",
                "TetherAgent",
                "TetherTestSupport",
                "TetherMQTT",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ]
)

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
