import ArgumentParser
import TetherCore

@main
struct TetherCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether",
        abstract: "Drive Tether devices from a terminal: your account and devices through the SDK, the LAN protocol, MQTT.",
        version: TetherVersion.current,
        subcommands: [
            Login.self, Register.self, Logout.self, WhoAmI.self, IoTToken.self,
            Devices.self, Bind.self, Unbind.self, Status.self, Write.self, Watch.self, RRPCCommand.self, ShadowCommand.self, PublishCommand.self,
            FirmwareCommand.self, ShareCommand.self, MessagesCommand.self, HomeCommand.self, ScheduleCommand.self, GroupCommand.self, SceneCommand.self,
            RuleCommand.self,
            TuyaCommand.self, BLECommand.self,
            OnboardCommand.self,
            Demo.self, LAN.self, MQTT.self, ChannelCommand.self,
        ]
    )
}

struct LAN: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lan",
        abstract: "Talk to devices on the local network (Gizwits GAgent LAN protocol).",
        subcommands: [LANDiscover.self, LANStatus.self, LANWrite.self, LANWatch.self, LANInfo.self, LANDecode.self]
    )
}
