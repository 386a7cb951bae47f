"""A peripheral for notification latency: once a central subscribes, it notifies its
CLOCK_MONOTONIC time (8 bytes, little-endian nanoseconds) every --interval ms, so that a central
on the same machine can tell how long each notification took to reach the app.
Registered with BlueZ (bluezoo) through dbus-fast, with the test suite's GATT objects.

Run: python ble_clock_peripheral.py --adapter hci1 [--interval 20]; prints "ready" once advertising."""

import argparse
import asyncio
import os
import struct
import sys
import time

from dbus_fast import BusType
from dbus_fast.aio import MessageBus

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Interop"))
from ble_gatt import Advertisement, Characteristic, Service, register  # noqa: E402

SERVICE = "7e7e0001-0000-4000-8000-7e7e7e7e7e7e"
CLOCK = "7e7e0002-0000-4000-8000-7e7e7e7e7e7e"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci1")
    parser.add_argument("--interval", type=float, default=20, help="milliseconds between notifications")
    args = parser.parse_args()

    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    root = "/com/tether/clock"
    service_path = root + "/service0"
    bus.export(service_path, Service(SERVICE))
    clock = Characteristic(CLOCK, service_path, ["read", "notify"], on_read=lambda: struct.pack("<Q", time.monotonic_ns()))
    bus.export(service_path + "/char0", clock)
    bus.export(root + "/advertisement0", Advertisement("Tether-Clock", [SERVICE]))
    await register(bus, args.adapter, root, root + "/advertisement0")
    print("ready", flush=True)
    while True:
        await asyncio.sleep(args.interval / 1000)
        clock.notify(struct.pack("<Q", time.monotonic_ns()))


if __name__ == "__main__":
    asyncio.run(main())
