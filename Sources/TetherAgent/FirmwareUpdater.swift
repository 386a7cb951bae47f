import Logging
import NIOCore
import TetherAlink
import TetherCore

/// Failures a simulated device's upgrades suffer on purpose, to show what apps and the cloud
/// see when they happen.
public struct FirmwareFaults: Sendable, Hashable {
    /// The package arrives with a digest other than the notice's: the device refuses to install
    /// it and reports step -3.
    public var badChecksum: Bool
    /// The download's connection drops once, after this fraction (0…1) of the package; the
    /// device resumes from the byte it reached with a `Range` request.
    public var interruptAt: Double?

    public init(badChecksum: Bool = false, interruptAt: Double? = nil) {
        self.badChecksum = badChecksum
        self.interruptAt = interruptAt
    }
}

/// A virtual device's upgrade: downloads the package a notice offers, reports its progress,
/// verifies it and "installs" it (the device then runs and reports the new version).
struct FirmwareUpdater: Sendable {
    let device: VirtualDevice
    let faults: FirmwareFaults
    let downloader: FirmwareDownloader
    let logger: Logger

    func upgrade(_ notice: FirmwareUpgradeNotice, client: AlinkDeviceClient) async {
        device.events.yield(.upgradeStarted(version: notice.version))
        var expected = notice
        if faults.badChecksum { expected.sign = String(expected.sign.reversed()) }
        let interruptAfter = faults.interruptAt.map { Int64(Double(notice.size) * min(max($0, 0), 1)) }
        var interrupted = false
        var received: Int64 = 0
        var reportedStep = 0
        do {
            try await downloader.download(
                expected,
                receive: { piece in
                    received += Int64(piece.readableBytes)
                    if let interruptAfter, !interrupted, received >= interruptAfter {
                        interrupted = true
                        received -= Int64(piece.readableBytes)
                        throw TetherError(.downloadFailed, "the simulated connection dropped")
                    }
                },
                progress: { reached in
                    // Downloading is the first 90 %; every tenth is reported, as devices do.
                    let step = max(1, Int(reached * 90 / max(notice.size, 1)))
                    guard step >= reportedStep + 10 || (step == 90 && reportedStep < 90) else { return }
                    reportedStep = step
                    try? await client.reportUpgradeProgress(step: step, desc: "downloading", module: notice.module)
                })
        } catch let error as TetherError {
            await fail(notice, step: error.code == .digestMismatch ? -3 : -2, reason: error.message, client: client)
            return
        } catch {
            await fail(notice, step: -2, reason: "\(error)", client: client)
            return
        }
        try? await client.reportUpgradeProgress(step: 100, desc: "installed", module: notice.module)
        device.firmwareVersion = notice.version
        device.events.yield(.upgraded(version: notice.version))
        do {
            try await client.reportFirmwareVersion(notice.version, module: notice.module)
        } catch {
            logger.warning("cannot report the new firmware version", metadata: ["error": "\(error)"])
        }
    }

    private func fail(_ notice: FirmwareUpgradeNotice, step: Int, reason: String, client: AlinkDeviceClient) async {
        logger.warning("firmware upgrade failed", metadata: ["version": "\(notice.version)", "step": "\(step)", "reason": "\(reason)"])
        device.events.yield(.upgradeFailed(step: step, reason: reason))
        try? await client.reportUpgradeProgress(step: step, desc: String(reason.utf8.prefix(200)) ?? "failed", module: notice.module)
    }
}
