"""An independent MOKO LW003-V3 peripheral, written from the vendor's GATT table and byte formats
(shared reference ble-profiles.md, Part A), registered with BlueZ (bluezoo) through dbus-fast:
the SDK's BlueZ central is tested against it, not only against Tether's own simulator.

Run: python ble_peripheral_lw003.py --adapter hci1 --password Moko4321 [--records N]
Prints "ready" once advertising, then serves until killed."""

import argparse
import asyncio
import struct
import time

from dbus_fast import BusType
from dbus_fast.aio import MessageBus

from ble_gatt import Advertisement, Characteristic, Service, register, uuid16


MAC = bytes([0xC8, 0x47, 0x8C, 0x12, 0x34, 0x56])


def manufacturer_payload(password_required):
    # A2: tx power, battery %, battery mV (BE), password flag, temperature and humidity x100 (BE), MAC.
    return struct.pack(">bBHBhH", -4, 85, 3600, 1 if password_required else 0, 2500, 5000) + MAC


class LW003:
    """The device's state: login on AA00, commands on AA02, storage records on AA04, a log on AA05."""

    def __init__(self, password, records):
        self.password = password
        self.records = records
        self.logged_in = password is None
        self.chars = {}

    def on_login(self, value):
        ok = len(value) == 12 and value[:4] == bytes([0xED, 0x01, 0x01, 0x08]) and value[4:].decode("ascii", "replace") == self.password
        self.logged_in = ok
        self.chars[0xAA00].notify(bytes([0xED, 0x01, 0x01, 0x01, 0x01 if ok else 0x00]))

    def on_command(self, value):
        if len(value) < 4 or value[0] != 0xED:
            return
        flag, cmd = value[1], value[2]
        if flag == 0x00 and cmd == 0x06:
            self.chars[0xAA02].notify(bytes([0xED, 0x00, 0x06, 0x02, 0x0E, 0x10]))
        elif flag == 0x01 and cmd == 0x20:
            self.chars[0xAA02].notify(bytes([0xED, 0x01, 0x20, 0x01, 0x01]))
            asyncio.get_event_loop().create_task(self.stream_records())
        else:
            self.chars[0xAA02].notify(bytes([0xED, flag, cmd, 0x01, 0x00]))

    async def stream_records(self):
        # A5: one iBeacon record per frame, then the summary frame.
        now = int(time.time())
        for index in range(self.records):
            raw = bytes([0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + bytes(range(16)) + struct.pack(">HHb", 1, index, -59)
            record = bytes([13 + len(raw), 0x00]) + struct.pack(">I", now - index) + bytes([0x10]) + bytes([0x11, 0x22, 0x33, 0x44, 0x55, index & 0xFF]) + bytes([0xC4]) + raw
            body = bytes([1]) + record
            self.chars[0xAA04].notify(bytes([0xED, 0x02, 0x01, len(body)]) + body)
            await asyncio.sleep(0.02)
        self.chars[0xAA04].notify(bytes([0xED, 0x02, 0x01, 0x03, 0x00]) + struct.pack(">H", self.records))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci1")
    parser.add_argument("--password")
    parser.add_argument("--records", type=int, default=5)
    args = parser.parse_args()
    device = LW003(args.password, args.records)

    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    root = "/com/tether/lw003"
    info = root + "/service0"
    custom = root + "/service1"
    bus.export(info, Service(uuid16(0x180A)))
    bus.export(custom, Service(uuid16(0xAA00)))
    texts = {0x2A24: b"LW003-B", 0x2A25: b"SN0001", 0x2A26: b"V3.0.1", 0x2A27: b"V1.0", 0x2A28: b"V3.0.1", 0x2A29: b"MOKO"}
    for index, (short, text) in enumerate(texts.items()):
        bus.export("%s/char%d" % (info, index), Characteristic(uuid16(short), info, ["read"], value=text))
    handlers = {0xAA00: device.on_login, 0xAA02: device.on_command}
    flags = {
        0xAA00: ["write", "write-without-response", "notify"],
        0xAA01: ["notify"],
        0xAA02: ["write", "write-without-response", "notify"],
        0xAA04: ["notify"],
        0xAA05: ["notify"],
    }
    for index, short in enumerate([0xAA00, 0xAA01, 0xAA02, 0xAA04, 0xAA05]):
        char = Characteristic(uuid16(short), custom, flags[short], on_write=handlers.get(short))
        device.chars[short] = char
        bus.export("%s/char%d" % (custom, index), char)
    advertisement = Advertisement(
        "LW003-3456", [uuid16(0xAA0A)], service_data={uuid16(0xAA0A): bytes([0x00])},
        manufacturer_data={0xFFFF: manufacturer_payload(args.password is not None)})
    bus.export(root + "/advertisement0", advertisement)

    await register(bus, args.adapter, root, root + "/advertisement0")
    print("ready", flush=True)

    async def log_lines():
        count = 0
        while True:
            await asyncio.sleep(0.5)
            count += 1
            device.chars[0xAA05].notify(("log line %d\n" % count).encode())

    await asyncio.gather(log_lines(), asyncio.Event().wait())


if __name__ == "__main__":
    asyncio.run(main())
