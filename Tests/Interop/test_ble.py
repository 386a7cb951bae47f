"""Bluetooth LE through BlueZ's D-Bus API, on a private bus where bluezoo (a mock of BlueZ) runs two
adapters (scripts/ble-test-bus.sh): the SDK's central (`tether ble …`, the issue's acceptance
command lines) against an independent LW003-V3 peripheral written from the vendor's GATT table
with dbus-fast (ble_peripheral_lw003.py)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import BIN, ROOT

PERIPHERAL = "00:11:22:33:44:02"
PASSWORD = "Moko4321"


@pytest.fixture(scope="module")
def ble_bus(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("ble-bus"))
    script = os.path.join(ROOT, "scripts", "ble-test-bus.sh")
    started = subprocess.run([script, "start", directory, sys.executable], capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    address = started.stdout.strip().split("=", 1)[1]
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    try:
        yield env
    finally:
        subprocess.run([script, "stop", directory], timeout=30)


@pytest.fixture(scope="module")
def lw003(ble_bus):
    process = subprocess.Popen(
        [sys.executable, os.path.join(os.path.dirname(__file__), "ble_peripheral_lw003.py"), "--adapter", "hci1", "--password", PASSWORD, "--records", "7"],
        env=ble_bus, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.strip() == "ready", process.stderr.read() if process.poll() is not None else line
        yield ble_bus
    finally:
        process.terminate()
        process.wait(timeout=10)


def tether(env, *arguments, timeout=60):
    return subprocess.run([os.path.join(BIN, "tether"), *arguments], env=env, capture_output=True, text=True, timeout=timeout)


def json_lines(output):
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_scan_recognises_an_lw003_and_decodes_its_advertisement(lw003):
    result = tether(lw003, "ble", "scan", "--adapter", "hci0", "--duration", "3", "--json")
    assert result.returncode == 0, result.stderr
    devices = {device["address"]: device for device in json_lines(result.stdout)}
    device = devices[PERIPHERAL]
    assert device["name"] == "LW003-3456"
    assert device["profile"] == "lw003"
    assert "rssi" in device
    assert device["lw003"] == {
        "txPower": -4, "batteryPercent": 85, "batteryMillivolts": 3600, "passwordRequired": True,
        "temperature": 25, "humidity": 50, "mac": "C8:47:8C:12:34:56", "deviceType": 0,
    }


def test_scan_with_a_service_filter_leaves_other_devices_out(lw003):
    result = tether(lw003, "ble", "scan", "--adapter", "hci0", "--duration", "2", "--service", "C000", "--json")
    assert result.returncode == 0, result.stderr
    assert PERIPHERAL not in [device["address"] for device in json_lines(result.stdout)]


def test_connect_lists_the_vendor_gatt_table(lw003):
    result = tether(lw003, "ble", "connect", "--adapter", "hci0", "--address", PERIPHERAL, "--json")
    assert result.returncode == 0, result.stderr
    services = {service["uuid"]: service for service in json_lines(result.stdout)[0]["services"]}
    assert {c["uuid"] for c in services["180A"]["characteristics"]} == {"2A24", "2A25", "2A26", "2A27", "2A28", "2A29"}
    custom = {c["uuid"]: c["properties"] for c in services["AA00"]["characteristics"]}
    assert set(custom) == {"AA00", "AA01", "AA02", "AA04", "AA05"}
    assert "notify" in custom["AA04"] and "write" in custom["AA02"]


def test_read_and_write_a_characteristic(lw003):
    read = tether(lw003, "ble", "read", "--adapter", "hci0", "--address", PERIPHERAL, "--service", "180A", "--characteristic", "2A29", "--json")
    assert read.returncode == 0, read.stderr
    assert json_lines(read.stdout) == [{"hex": "4d4f4b4f", "text": "MOKO"}]
    refused = tether(lw003, "ble", "read", "--adapter", "hci0", "--address", PERIPHERAL, "--service", "AA00", "--characteristic", "AA04")
    assert refused.returncode != 0 and "gattOperationNotPermitted" in refused.stderr


def test_lw003_records_are_decoded_oldest_first_with_their_fields(lw003):
    result = tether(lw003, "ble", "lw003", "records", "--adapter", "hci0", "--address", PERIPHERAL, "--password", PASSWORD, "--count", "4", "--json")
    assert result.returncode == 0, result.stderr
    records = json_lines(result.stdout)
    assert len(records) == 4
    for index, record in enumerate(records):
        assert record["type"] == "iBeacon" and record["typeCode"] == 0
        assert record["mac"] == "11:22:33:44:55:%02X" % index
        assert record["rssi"] == -60 and record["timeZoneHalfHours"] == 16
        assert record["localTime"].endswith("+08:00")
        assert record["raw"].startswith("1aff4c000215")


def test_lw003_all_records_end_with_the_summary(lw003):
    result = tether(lw003, "ble", "lw003", "records", "--adapter", "hci0", "--address", PERIPHERAL, "--password", PASSWORD, "--json")
    assert result.returncode == 0, result.stderr
    assert len(json_lines(result.stdout)) == 7


def test_lw003_log_lines(lw003):
    result = tether(lw003, "ble", "lw003", "log", "--adapter", "hci0", "--address", PERIPHERAL, "--password", PASSWORD, "--count", "2", "--json")
    assert result.returncode == 0, result.stderr
    lines = [entry["line"] for entry in json_lines(result.stdout)]
    assert len(lines) == 2 and all(line.startswith("log line ") for line in lines)


def test_lw003_info_reads_device_information_and_the_battery(lw003):
    result = tether(lw003, "ble", "lw003", "info", "--adapter", "hci0", "--address", PERIPHERAL, "--password", PASSWORD, "--json")
    assert result.returncode == 0, result.stderr
    info = json_lines(result.stdout)[0]
    assert info["manufacturer"] == "MOKO" and info["model"] == "LW003-B" and info["batteryMillivolts"] == 3600


def test_a_wrong_password_is_a_login_failure(lw003):
    result = tether(lw003, "ble", "lw003", "info", "--adapter", "hci0", "--address", PERIPHERAL, "--password", "Wrong123")
    assert result.returncode != 0
    assert "loginFailed" in result.stderr
    assert "Wrong123" not in result.stderr


def test_an_address_nobody_advertises_is_not_found(lw003):
    result = tether(lw003, "ble", "connect", "--adapter", "hci0", "--address", "00:11:22:33:44:99", "--timeout", "2")
    assert result.returncode != 0 and "peripheralNotFound" in result.stderr


def test_a_missing_adapter_is_named(lw003):
    result = tether(lw003, "ble", "scan", "--adapter", "hci7", "--duration", "1")
    assert result.returncode != 0 and "bluetoothAdapterNotFound" in result.stderr
