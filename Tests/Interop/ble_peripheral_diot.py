"""An independent DIoT (Daatrics) sensor, written from the vendor's GATT table and byte formats and
Tether's conventions (shared reference ble-profiles.md, Part B: B1 GATT table, B2 advertisement,
B4 command interface, B5 value types, B6 data, battery, identifier and debug console), registered
with BlueZ (bluezoo) through dbus-fast: the SDK's DIoT client is tested against it, not only
against Tether's own simulator.

Run: python ble_peripheral_diot.py --adapter hci1 [--mtu 23] [--omit 180F,FFD1]
Prints "ready" once advertising, then serves until killed. --omit leaves services or
characteristics (16-bit UUIDs, hex) out of the GATT table. --mtu is the ATT MTU it declares (the
central sees it on each characteristic) and splits list answers by: MTU - 3 bytes per notification."""

import argparse
import asyncio
import struct

from dbus_fast import BusType
from dbus_fast.aio import MessageBus

from ble_gatt import Advertisement, Characteristic, Service, register, uuid16


# B2: the worked example's id; the name is "DIoT-" and its last two bytes in hex.
DEVICE_ID = bytes.fromhex("0F1E2D3C4B5A69788796A5B4C3D2E1F0")
NAME = "DIoT-%02X%02X" % (DEVICE_ID[14], DEVICE_ID[15])
COMPANY = 0x04F7

# B5: the type of each feature code's 4-byte little-endian value. f float32, i int32 (code 31:
# integer, the Tether convention), b boolean (01 00 00 00 / 00 00 00 00), d u32 Unix seconds.
TYPES = {
    1: "f", 2: "f", 3: "f", 4: "i", 5: "f", 6: "f", 7: "f", 8: "f", 9: "f", 10: "f", 11: "f", 12: "f", 13: "f", 14: "f",
    15: "b", 16: "d", 17: "d", 18: "i", 19: "f", 20: "i", 21: "d", 22: "f", 23: "f", 24: "f", 25: "f", 26: "f",
    27: "b", 28: "i", 29: "i", 30: "b", 31: "i", 32: "b", 33: "f", 34: "f", 35: "b", 36: "f", 37: "f", 38: "b",
    39: "i", 40: "f", 41: "f", 42: "b", 43: "d",
}

# What the sensor measures and keeps when it starts; every other feature is 0 (its default).
INITIAL_FEATURES = {
    4: 72,            # heartRate
    7: 25.0,          # temperature
    8: 45.5,          # humidity
    9: -2.5,          # accX
    18: 1234,         # activityStepCounter (counts up once a second)
    27: True,         # hrAlert
    28: 120,          # hrAlertTriggerTop
    31: 90,           # oxygenAlertTriggerBottom
    33: 38.5,         # temperatureAlertTriggerTop
    43: 1700000000,   # currentDate
}
# B7: channel 1 carries temperature every second, channel 2 heart rate automatically.
INITIAL_CHANNELS = {1: 7, 2: 4}
INITIAL_RATES = {1: 1000}
STEP_COUNTER = 18


def encode(code, value):
    kind = TYPES[code]
    if kind == "f":
        return struct.pack("<f", value)
    if kind == "i":
        return struct.pack("<i", value)
    if kind == "b":
        return bytes([1 if value else 0, 0, 0, 0])
    return struct.pack("<I", value)


class DIoT:
    """The sensor's state: the feature table (code -> 4 value bytes), the channel map (channel ->
    feature code), the rate table (channel -> milliseconds), and what each command answers."""

    def __init__(self, mtu):
        self.mtu = mtu
        self.chars = {}
        self.reset()
        self.battery = 90
        self.last_sent = {}

    def reset(self):
        self.features = {code: encode(code, INITIAL_FEATURES.get(code, 0)) for code in TYPES}
        self.channels = {channel: INITIAL_CHANNELS.get(channel, 0) for channel in range(1, 10)}
        self.rates = {channel: INITIAL_RATES.get(channel, 0) for channel in range(1, 10)}

    # Replies: notifications on the characteristic written to, lists cut at record boundaries so
    # that none is longer than MTU - 3 (B4, Tether conventions 1 and 3).

    def send_list(self, short, records, size):
        per = (self.mtu - 3) // size
        chunks = [b"".join(records[start:start + per]) for start in range(0, len(records), per)]
        asyncio.get_event_loop().create_task(self.send_chunks(self.chars[short], chunks))

    async def send_chunks(self, char, chunks):
        for chunk in chunks:
            char.notify(chunk)
            await asyncio.sleep(0.005)  # about a connection interval between notifications

    def feature_record(self, code):
        return bytes([code]) + self.features[code]

    def channel_record(self, channel):
        return bytes([channel, self.channels[channel]])

    def rate_record(self, channel):
        return bytes([channel]) + struct.pack("<I", self.rates[channel])

    def on_features(self, value):
        op, args = value[:1], value[1:]
        if op == b"\x01" and not args:
            self.send_list(0xC001, [self.feature_record(code) for code in sorted(self.features)], 5)
        elif op == b"\x01" and len(args) == 1 and args[0] in self.features:
            self.chars[0xC001].notify(self.feature_record(args[0]))
        elif op == b"\x02" and len(args) == 5 and args[0] in self.features:
            self.set_feature(args[0], args[1:])
            self.chars[0xC001].notify(self.feature_record(args[0]))
        elif op == b"\x03" and len(args) == 1 and args[0] in self.features:
            self.set_feature(args[0], bytes(4))
            self.chars[0xC001].notify(self.feature_record(args[0]))
        elif op == b"\x03" and not args:
            for code in self.features:
                self.set_feature(code, bytes(4))
            self.send_list(0xC001, [self.feature_record(code) for code in sorted(self.features)], 5)
        # Anything else (unknown codes, other lengths) is ignored, as a device ignores it.

    def on_channels(self, value):
        op, args = value[:1], value[1:]
        if op == b"\x01" and not args:
            self.send_list(0xC002, [self.channel_record(channel) for channel in range(1, 10)], 2)
        elif op == b"\x01" and len(args) == 1 and args[0] in self.channels:
            self.chars[0xC002].notify(self.channel_record(args[0]))
        elif op == b"\x02" and len(args) == 2 and args[0] in self.channels:
            self.channels[args[0]] = args[1]
            self.chars[0xC002].notify(self.channel_record(args[0]))
            self.sample(args[0])
        elif op == b"\x03" and len(args) == 1 and args[0] in self.channels:
            self.channels[args[0]] = 0
            self.chars[0xC002].notify(self.channel_record(args[0]))
        elif op == b"\x03" and not args:
            for channel in self.channels:
                self.channels[channel] = 0
            self.send_list(0xC002, [self.channel_record(channel) for channel in range(1, 10)], 2)

    def on_rates(self, value):
        op, args = value[:1], value[1:]
        if op == b"\x01" and not args:
            self.send_list(0xC003, [self.rate_record(channel) for channel in range(1, 10)], 5)
        elif op == b"\x01" and len(args) == 1 and args[0] in self.rates:
            self.chars[0xC003].notify(self.rate_record(args[0]))
        elif op == b"\x02" and len(args) == 5 and args[0] in self.rates:
            self.rates[args[0]] = struct.unpack("<I", args[1:])[0]
            self.chars[0xC003].notify(self.rate_record(args[0]))
        elif op == b"\x03" and len(args) == 1 and args[0] in self.rates:
            self.rates[args[0]] = 0
            self.chars[0xC003].notify(self.rate_record(args[0]))
        elif op == b"\x03" and not args:
            for channel in self.rates:
                self.rates[channel] = 0
            self.send_list(0xC003, [self.rate_record(channel) for channel in range(1, 10)], 5)

    # Data (B6): D00n carries the record of the feature mapped to channel n, 00 when none.

    def data_value(self, channel):
        code = self.channels[channel]
        return self.feature_record(code) if code in self.features else b"\x00"

    def sample(self, channel):
        """Notifies channel `channel`'s current value (nothing when no feature is mapped)."""
        char = self.chars.get(0xD000 + channel)
        if char is not None and self.channels[channel] in self.features:
            char.notify(self.data_value(channel))

    def set_feature(self, code, value):
        changed = self.features[code] != value
        self.features[code] = value
        # Rate 0 (automatic): the channels carrying the feature notify every change.
        if changed:
            for channel, mapped in self.channels.items():
                if mapped == code and self.rates[channel] == 0:
                    self.sample(channel)

    async def run_channel(self, channel):
        # A channel with a rate notifies its value every `rate` ms.
        while True:
            rate = self.rates[channel]
            await asyncio.sleep(rate / 1000 if rate else 0.05)
            if rate:
                self.sample(channel)

    async def run_sensor(self):
        while True:
            await asyncio.sleep(1)
            steps = struct.unpack("<i", self.features[STEP_COUNTER])[0]
            self.set_feature(STEP_COUNTER, struct.pack("<i", steps + 1))
            char = self.chars.get(0x2A19)
            if char is not None:
                char.notify(bytes([self.battery]))

    # Debug console (B6): ASCII commands in, ASCII text out, cut to MTU - 3 bytes.

    def on_debug(self, value):
        text = value.decode("ascii", "replace").strip()
        if text == "help":
            answer = "commands: help, version, echo <text>, reset\n"
        elif text == "version":
            answer = "DIoT simulator 1.0.0\n"
        elif text.startswith("echo "):
            answer = text[5:] + "\n"
        elif text == "reset":
            self.reset()
            answer = "ok\n"
        else:
            answer = "unknown: %s\n" % text
        data = answer.encode("ascii", "replace")
        per = self.mtu - 3
        asyncio.get_event_loop().create_task(self.send_chunks(self.chars[0xFF71], [data[i:i + per] for i in range(0, len(data), per)]))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci1")
    parser.add_argument("--mtu", type=int, default=23)
    parser.add_argument("--omit", default="", help="16-bit UUIDs (hex) of services or characteristics to leave out")
    args = parser.parse_args()
    omit = {int(short, 16) for short in args.omit.split(",") if short}
    device = DIoT(args.mtu)

    # B1, with the Tether convention for the properties.
    both = ["write", "write-without-response", "notify"]
    table = {
        0x180A: [
            (0x2A29, ["read"], {"value": b"Daatrics"}),
            (0x2A24, ["read"], {"value": b"DIoT-E1"}),
            (0x2A27, ["read"], {"value": b"HW 1.2"}),
            (0x2A26, ["read"], {"value": b"FW 2.1.0"}),
            (0x2A28, ["read"], {"value": b"SW 2.1.3"}),
        ],
        0x180F: [(0x2A19, ["read", "notify"], {"on_read": lambda: bytes([device.battery])})],
        0xC000: [
            (0xC001, both, {"on_write": device.on_features}),
            (0xC002, both, {"on_write": device.on_channels}),
            (0xC003, both, {"on_write": device.on_rates}),
        ],
        0xD000: [
            (0xD000 + channel, ["read", "notify"], {
                "on_read": (lambda channel=channel: device.data_value(channel)),
                # The first sample comes when the central subscribes.
                "on_subscribe": (lambda channel=channel: device.sample(channel)),
            })
            for channel in range(1, 10)
        ],
        0xFFD0: [(0xFFD1, ["read"], {"value": DEVICE_ID})],
        0xFF70: [(0xFF71, both, {"on_write": device.on_debug})],
    }

    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    # Another root than the LW003 peripheral's (/com/tether/lw003), so both can be registered at once.
    root = "/com/tether/diot"
    for service_index, (service_short, chars) in enumerate(table.items()):
        if service_short in omit:
            continue
        service_path = "%s/service%d" % (root, service_index)
        bus.export(service_path, Service(uuid16(service_short)))
        for char_index, (short, flags, extra) in enumerate(chars):
            if short in omit:
                continue
            char = Characteristic(uuid16(short), service_path, flags, mtu=args.mtu, **extra)
            device.chars[short] = char
            bus.export("%s/char%d" % (service_path, char_index), char)
    bus.export(root + "/advertisement0", Advertisement(NAME, [uuid16(0xC000)], manufacturer_data={COMPANY: DEVICE_ID}))

    adapter_path = "/org/bluez/" + args.adapter
    await register(bus, args.adapter, root, root + "/advertisement0")
    print("ready", flush=True)

    await asyncio.gather(device.run_sensor(), *(device.run_channel(channel) for channel in range(1, 10)), asyncio.Event().wait())


if __name__ == "__main__":
    asyncio.run(main())
