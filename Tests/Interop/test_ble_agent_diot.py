"""The agent's simulated DIoT sensor (`tether-agent ble-simulate --profile diot`) on bluezoo: bleak
reads it and gets its command replies; the SDK's central runs the issue's DIoT command lines."""
import asyncio
import os
import subprocess

import pytest
from bleak import BleakClient, BleakScanner

from conftest import BIN
from test_ble import ble_bus, json_lines, tether  # noqa: F401 (fixtures)
from test_ble_agent import run, uuid

PERIPHERAL = "00:11:22:33:44:02"


@pytest.fixture(scope="module")
def agent(ble_bus):  # noqa: F811
    process = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "ble-simulate", "--profile", "diot", "--adapter", "hci1"],
        env=ble_bus, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("advertising DIoT-E1F0"), line + (process.stderr.read() if process.poll() is not None else "")
        yield ble_bus
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_bleak_reads_the_sensor_and_its_feature_table(agent):
    async def session():
        device = await BleakScanner.find_device_by_address(PERIPHERAL, timeout=5, bluez={"adapter": "hci0"})
        assert device is not None
        async with BleakClient(device, bluez={"adapter": "hci0"}) as client:
            identifier = bytes(await client.read_gatt_char(uuid(0xFFD1)))
            battery = bytes(await client.read_gatt_char(uuid(0x2A19)))
            replies = asyncio.Queue()
            await client.start_notify(uuid(0xC001), lambda _, data: replies.put_nowait(bytes(data)))
            await client.write_gatt_char(uuid(0xC001), bytes([0x01, 0x07]), response=False)
            temperature = await asyncio.wait_for(replies.get(), 5)
            return identifier, battery, temperature

    identifier, battery, temperature = run(agent, session())
    assert identifier == bytes.fromhex("0F1E2D3C4B5A69788796A5B4C3D2E1F0")
    assert 0 < battery[0] <= 100
    assert temperature == bytes([0x07, 0x00, 0x00, 0xC8, 0x41])


def test_the_sdk_reads_info_and_features(agent):
    info = tether(agent, "ble", "diot", "info", "--adapter", "hci0", "--address", PERIPHERAL, "--json")
    assert info.returncode == 0, info.stderr
    details = json_lines(info.stdout)[0]
    assert details["deviceID"] == "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0" and details["manufacturer"] == "Daatrics"
    features = tether(agent, "ble", "diot", "features", "--adapter", "hci0", "--address", PERIPHERAL, "--json")
    assert features.returncode == 0, features.stderr
    by_name = {feature["name"]: feature for feature in json_lines(features.stdout)}
    assert len(by_name) == 43
    assert by_name["temperature"] == {"code": 7, "name": "temperature", "type": "float", "value": 25}
    assert by_name["humidity"]["value"] == 45.5


def test_set_then_fetch_and_live_data(agent):
    set_rate = tether(agent, "ble", "diot", "set-rate", "--adapter", "hci0", "--address", PERIPHERAL, "--channel", "2", "--interval", "1000", "--json")
    assert set_rate.returncode == 0, set_rate.stderr
    rates = tether(agent, "ble", "diot", "rates", "--adapter", "hci0", "--address", PERIPHERAL, "--channel", "2", "--json")
    assert json_lines(rates.stdout)[0]["intervalMilliseconds"] == 1000
    data = tether(agent, "ble", "diot", "data", "--adapter", "hci0", "--address", PERIPHERAL, "--channel", "2", "--count", "2", "--json")
    assert data.returncode == 0, data.stderr
    values = json_lines(data.stdout)
    assert len(values) == 2 and all(value["name"] == "heartRate" for value in values)
