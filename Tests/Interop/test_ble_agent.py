"""The agent's simulated LW003-V3 (`tether-agent ble-simulate`) through BlueZ's peripheral API on
bluezoo: bleak, the standard Python central, scans, connects, reads and receives notifications
from it; the SDK's central reads its records and log through the issue's command lines."""
import asyncio
import json
import os
import subprocess

import pytest
from bleak import BleakClient, BleakScanner

from conftest import BIN
from test_ble import ble_bus, json_lines, tether  # noqa: F401 (fixtures)

PERIPHERAL = "00:11:22:33:44:02"
PASSWORD = "Tether42"
BASE = "-0000-1000-8000-00805f9b34fb"


def uuid(short):
    return "0000%04x%s" % (short, BASE)


def start_agent(env, *extra):
    process = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "ble-simulate", "--profile", "lw003", "--adapter", "hci1", *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    line = process.stdout.readline()
    if not line.startswith("advertising"):
        process.kill()
        raise AssertionError("the agent did not advertise: %s %s" % (line, process.stderr.read()))
    return process


@pytest.fixture(scope="module")
def agent(ble_bus):  # noqa: F811
    process = start_agent(ble_bus, "--password", PASSWORD, "--records", "40", "--log-interval", "0.2")
    try:
        yield ble_bus
    finally:
        process.terminate()
        process.wait(timeout=10)


def run(env, coroutine):
    previous = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS")
    os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = env["DBUS_SYSTEM_BUS_ADDRESS"]
    try:
        return asyncio.run(coroutine)
    finally:
        if previous is None:
            del os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
        else:
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = previous


def test_bleak_scans_connects_reads_and_gets_notifications(agent):
    async def session():
        device, advertisement = None, None
        found = await BleakScanner.discover(timeout=4, return_adv=True, bluez={"adapter": "hci0"})
        for candidate, data in found.values():
            if candidate.address == PERIPHERAL:
                device, advertisement = candidate, data
        assert device is not None, found
        async with BleakClient(device, bluez={"adapter": "hci0"}) as client:
            manufacturer = (await client.read_gatt_char(uuid(0x2A29))).decode()
            model = (await client.read_gatt_char(uuid(0x2A24))).decode()
            replies = asyncio.Queue()
            await client.start_notify(uuid(0xAA00), lambda _, data: replies.put_nowait(bytes(data)))
            await client.write_gatt_char(uuid(0xAA00), bytes([0xED, 0x01, 0x01, 0x08]) + PASSWORD.encode(), response=True)
            login = await asyncio.wait_for(replies.get(), 5)
            await client.start_notify(uuid(0xAA02), lambda _, data: replies.put_nowait(bytes(data)))
            await client.write_gatt_char(uuid(0xAA02), bytes([0xED, 0x00, 0x06, 0x00]), response=True)
            voltage = await asyncio.wait_for(replies.get(), 5)
            return advertisement, manufacturer, model, login, voltage

    advertisement, manufacturer, model, login, voltage = run(agent, session())
    assert advertisement.local_name == "LW003-3456"
    payload = next(iter(advertisement.manufacturer_data.values()))
    assert len(payload) == 15 and payload[4] == 0x01 and payload[9:] == bytes([0xC8, 0x47, 0x8C, 0x12, 0x34, 0x56])
    assert uuid(0xAA0A) in advertisement.service_data
    assert manufacturer.startswith("MOKO") and model == "LW003-B"
    assert login == bytes([0xED, 0x01, 0x01, 0x01, 0x01])
    assert voltage[:4] == bytes([0xED, 0x00, 0x06, 0x02]) and 3000 <= int.from_bytes(voltage[4:], "big") <= 4200


def test_the_sdk_reads_every_record_of_every_type(agent):
    result = tether(agent, "ble", "lw003", "records", "--adapter", "hci0", "--address", PERIPHERAL, "--password", PASSWORD, "--json")
    assert result.returncode == 0, result.stderr
    records = json_lines(result.stdout)
    assert len(records) == 40
    assert {record["typeCode"] for record in records} == set(range(11))
    assert [record["scanTime"] for record in records] == sorted(record["scanTime"] for record in records)
    ibeacon = next(record for record in records if record["type"] == "iBeacon")
    assert ibeacon["raw"].startswith("1aff4c000215e2c56db5")


def test_the_sdk_reads_the_log_and_scans_the_advertisement(agent):
    log = tether(agent, "ble", "lw003", "log", "--adapter", "hci0", "--address", PERIPHERAL, "--password", PASSWORD, "--count", "3", "--json")
    assert log.returncode == 0, log.stderr
    lines = [entry["line"] for entry in json_lines(log.stdout)]
    assert len(lines) == 3 and all("battery=" in line for line in lines)
    scan = tether(agent, "ble", "scan", "--adapter", "hci0", "--duration", "3", "--json")
    device = next(device for device in json_lines(scan.stdout) if device["address"] == PERIPHERAL)
    assert device["profile"] == "lw003" and device["lw003"]["passwordRequired"] is True


def test_a_wrong_password_is_refused_by_the_simulator(agent):
    result = tether(agent, "ble", "lw003", "info", "--adapter", "hci0", "--address", PERIPHERAL, "--password", "Wrong123")
    assert result.returncode != 0 and "loginFailed" in result.stderr
