"""Notification-to-app latency through bleak (the standard Python BLE central) on the same bus
and peripheral as the Tether central's run: the time from the peripheral's clock stamp to the
notification callback, CLOCK_MONOTONIC on both sides. Prints one JSON object.

Run: python ble_latency_bleak.py --address 00:11:22:33:44:02 [--adapter hci0] [--count 1000]"""

import argparse
import asyncio
import json
import struct
import time

from bleak import BleakClient, BleakScanner

CLOCK = "7e7e0002-0000-4000-8000-7e7e7e7e7e7e"


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--address", required=True)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()

    device = await BleakScanner.find_device_by_address(args.address, timeout=10, bluez={"adapter": args.adapter})
    if device is None:
        raise SystemExit("%s not found" % args.address)
    warmup = args.count // 10
    samples = []
    done = asyncio.Event()

    def received(_, data):
        now = time.monotonic_ns()
        samples.append((now - struct.unpack("<Q", bytes(data)[:8])[0]) / 1000)
        if len(samples) >= args.count + warmup:
            done.set()

    async with BleakClient(device, bluez={"adapter": args.adapter}) as client:
        await client.start_notify(CLOCK, received)
        await asyncio.wait_for(done.wait(), timeout=60 + args.count * 0.1)
        await client.stop_notify(CLOCK)
    timed = samples[warmup:args.count + warmup]
    print(json.dumps({
        "central": "bleak", "count": len(timed),
        "p50": round(percentile(timed, 50)), "p99": round(percentile(timed, 99)), "max": round(max(timed)),
    }))


if __name__ == "__main__":
    asyncio.run(main())
