"""DIoT over Bluetooth LE through BlueZ's D-Bus API, on a private bus where bluezoo (a mock of BlueZ)
runs two adapters (scripts/ble-test-bus.sh): the SDK's DIoT client (`tether ble diot …`) against an
independent DIoT peripheral written from the reference's GATT table and conventions with dbus-fast
(ble_peripheral_diot.py, on hci1). It declares ATT MTU 23, so its lists come cut in 20-byte
notifications (43 features: 11 of them) and the client must put them back together.

Each module starts its own bus (module-scoped fixtures), so this one and test_ble.py (the LW003
peripheral, also on hci1) never share an adapter. Tests that change the peripheral's tables put
them back, in a `finally`."""
import contextlib
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from test_ble import json_lines, tether

PERIPHERAL = "00:11:22:33:44:02"
DEVICE = ["--adapter", "hci0", "--address", PERIPHERAL]
HERE = os.path.dirname(__file__)


@contextlib.contextmanager
def ble_bus(directory):
    """A private dbus-daemon with bluezoo on it; yields the environment that points at it."""
    script = os.path.join(ROOT, "scripts", "ble-test-bus.sh")
    started = subprocess.run([script, "start", directory, sys.executable], capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    address = started.stdout.strip().split("=", 1)[1]
    try:
        yield dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    finally:
        subprocess.run([script, "stop", directory], timeout=30)


@contextlib.contextmanager
def diot_peripheral(env, *arguments):
    """ble_peripheral_diot.py on hci1, once it says it is advertising."""
    process = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "ble_peripheral_diot.py"), "--adapter", "hci1", *arguments],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.strip() == "ready", process.stderr.read() if process.poll() is not None else line
        yield env
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def diot(tmp_path_factory):
    with ble_bus(str(tmp_path_factory.mktemp("ble-bus-diot"))) as env, diot_peripheral(env) as env:
        yield env


@pytest.fixture(scope="module")
def bare_diot(tmp_path_factory):
    """A second bus, with a DIoT that has no battery service and no device identifier."""
    with ble_bus(str(tmp_path_factory.mktemp("ble-bus-bare"))) as env, diot_peripheral(env, "--omit", "180F,FFD1") as env:
        yield env


def diot_cli(env, *arguments, timeout=60):
    return tether(env, "ble", "diot", *arguments, timeout=timeout)


def ok(result):
    assert result.returncode == 0, result.stderr
    return json_lines(result.stdout)


def features_by_code(env):
    return {feature["code"]: feature for feature in ok(diot_cli(env, "features", *DEVICE, "--json"))}


def test_scan_recognises_the_diot_advertisement(diot):
    result = tether(diot, "ble", "scan", "--adapter", "hci0", "--duration", "3", "--service", "C000", "--json")
    devices = {device["address"]: device for device in ok(result)}
    device = devices[PERIPHERAL]
    assert device["profile"] == "diot"
    assert device["diot"] == {"deviceID": "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", "localName": "DIoT-E1F0"}
    assert device["manufacturerData"] == {"04F7": "0f1e2d3c4b5a69788796a5b4c3d2e1f0"}
    assert device["serviceUUIDs"] == ["C000"]


def test_known_devices_come_without_a_scan_and_a_link_has_an_rssi(diot):
    ok(tether(diot, "ble", "scan", "--adapter", "hci0", "--duration", "2", "--service", "C000", "--json"))
    unknown = "00:11:22:33:44:7F"
    known = ok(tether(diot, "ble", "known", "--adapter", "hci0", "--address", unknown, "--address", PERIPHERAL, "--json"))
    assert [device["address"] for device in known] == [PERIPHERAL]
    assert known[0]["name"] == "DIoT-E1F0"
    nothing = tether(diot, "ble", "known", "--adapter", "hci0", "--address", unknown)
    assert nothing.returncode == 0 and nothing.stdout == "" and "knows none" in nothing.stderr
    # bluezoo reports RSSI 0 for every device; BlueZ keeps the last advertisement's.
    assert ok(tether(diot, "ble", "connect", *DEVICE, "--json"))[0]["rssi"] == 0


def test_info_reads_device_information_battery_and_identifier(diot):
    assert ok(diot_cli(diot, "info", *DEVICE, "--json")) == [{
        "manufacturer": "Daatrics", "model": "DIoT-E1", "hardware": "HW 1.2", "firmware": "FW 2.1.0", "software": "SW 2.1.3",
        "batteryPercent": 90, "deviceID": "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
    }]


def test_features_come_whole_from_split_notifications_with_their_types(diot):
    connected = ok(tether(diot, "ble", "connect", *DEVICE, "--json"))[0]
    assert connected["maximumValueLength"] == 20  # so the 43 records (215 bytes) came in 11 notifications
    features = ok(diot_cli(diot, "features", *DEVICE, "--json"))
    assert [feature["code"] for feature in features] == list(range(1, 44))
    assert all(set(feature) == {"code", "name", "type", "value"} for feature in features)
    by_code = {feature["code"]: feature for feature in features}
    assert by_code[7] == {"code": 7, "name": "temperature", "type": "float", "value": 25.0}
    assert by_code[4] == {"code": 4, "name": "heartRate", "type": "int32", "value": 72}
    assert by_code[8]["value"] == 45.5 and by_code[9]["value"] == -2.5
    assert by_code[27] == {"code": 27, "name": "hrAlert", "type": "bool", "value": True}
    assert by_code[42] == {"code": 42, "name": "personGender", "type": "bool", "value": False}
    assert by_code[31] == {"code": 31, "name": "oxygenAlertTriggerBottom", "type": "int32", "value": 90}
    assert by_code[43] == {"code": 43, "name": "currentDate", "type": "date", "value": 1700000000}
    assert by_code[16]["type"] == "date" and by_code[16]["value"] == 0
    assert by_code[5]["name"] == "oxigen"
    assert by_code[18]["type"] == "int32" and by_code[18]["value"] >= 1234  # the step counter counts


def test_one_feature_by_name_or_code(diot):
    assert ok(diot_cli(diot, "features", *DEVICE, "--code", "humidity", "--json")) == [
        {"code": 8, "name": "humidity", "type": "float", "value": 45.5}]
    assert ok(diot_cli(diot, "features", *DEVICE, "--code", "28", "--json")) == [
        {"code": 28, "name": "hrAlertTriggerTop", "type": "int32", "value": 120}]


def test_channels_and_rates_as_the_device_starts(diot):
    channels = ok(diot_cli(diot, "channels", *DEVICE, "--json"))
    assert channels[:2] == [{"channel": 1, "feature": 7, "name": "temperature"}, {"channel": 2, "feature": 4, "name": "heartRate"}]
    assert channels[2:] == [{"channel": n, "feature": 0, "name": "empty"} for n in range(3, 10)]
    rates = ok(diot_cli(diot, "rates", *DEVICE, "--json"))
    assert rates[0] == {"channel": 1, "intervalMilliseconds": 1000, "automatic": False}
    assert rates[1:] == [{"channel": n, "intervalMilliseconds": 0, "automatic": True} for n in range(2, 10)]


def test_set_feature_then_fetch_round_trips(diot):
    try:
        assert ok(diot_cli(diot, "set-feature", *DEVICE, "--code", "temperatureAlertTriggerTop", "--value", "50", "--json")) == [
            {"code": 33, "name": "temperatureAlertTriggerTop", "type": "float", "value": 50.0}]
        assert ok(diot_cli(diot, "set-feature", *DEVICE, "--code", "hrAlert", "--value", "false", "--json"))[0]["value"] is False
        assert ok(diot_cli(diot, "set-feature", *DEVICE, "--code", "29", "--value", "-40", "--json"))[0]["value"] == -40
        assert ok(diot_cli(diot, "set-feature", *DEVICE, "--code", "activityLevelDate", "--value", "1700003600", "--json"))[0]["value"] == 1700003600
        assert ok(diot_cli(diot, "set-feature", *DEVICE, "--code", "personHeight", "--value", "1.8", "--json"))[0]["value"] == 1.8
        features = features_by_code(diot)
        assert features[33]["value"] == 50.0
        assert features[27]["value"] is False
        assert features[29]["value"] == -40
        assert features[21]["value"] == 1700003600
        assert features[40]["value"] == 1.8
        assert features[7]["value"] == 25.0  # the others are untouched
        cleaned = ok(diot_cli(diot, "clean", "features", *DEVICE, "--code", "33", "--json"))
        assert cleaned == [{"code": 33, "name": "temperatureAlertTriggerTop", "type": "float", "value": 0}]
        assert ok(diot_cli(diot, "features", *DEVICE, "--code", "33", "--json"))[0]["value"] == 0
    finally:
        assert diot_cli(diot, "debug", *DEVICE, "reset").returncode == 0
    assert features_by_code(diot)[33]["value"] == 38.5


def test_set_channel_and_rate_then_fetch_round_trips(diot):
    try:
        assert ok(diot_cli(diot, "set-channel", *DEVICE, "--channel", "3", "--feature", "activityStepCounter", "--json")) == [
            {"channel": 3, "feature": 18, "name": "activityStepCounter"}]
        assert ok(diot_cli(diot, "set-rate", *DEVICE, "--channel", "3", "--interval", "250", "--json")) == [
            {"channel": 3, "intervalMilliseconds": 250, "automatic": False}]
        assert ok(diot_cli(diot, "channels", *DEVICE, "--json"))[2] == {"channel": 3, "feature": 18, "name": "activityStepCounter"}
        assert ok(diot_cli(diot, "channels", *DEVICE, "--channel", "3", "--json")) == [{"channel": 3, "feature": 18, "name": "activityStepCounter"}]
        assert ok(diot_cli(diot, "rates", *DEVICE, "--channel", "3", "--json")) == [{"channel": 3, "intervalMilliseconds": 250, "automatic": False}]
        assert ok(diot_cli(diot, "clean", "channels", *DEVICE, "--channel", "3", "--json")) == [{"channel": 3, "feature": 0, "name": "empty"}]
        assert ok(diot_cli(diot, "clean", "rates", *DEVICE, "--channel", "3", "--json")) == [{"channel": 3, "intervalMilliseconds": 0, "automatic": True}]
        assert ok(diot_cli(diot, "channels", *DEVICE, "--json"))[2]["feature"] == 0
    finally:
        assert diot_cli(diot, "debug", *DEVICE, "reset").returncode == 0


def test_clean_all_answers_the_whole_table(diot):
    try:
        features = ok(diot_cli(diot, "clean", "features", *DEVICE, "--json"))
        assert [feature["code"] for feature in features] == list(range(1, 44))
        assert {feature["value"] for feature in features if feature["type"] != "bool"} == {0}
        assert {feature["value"] for feature in features if feature["type"] == "bool"} == {False}
        assert features_by_code(diot)[7]["value"] == 0
        channels = ok(diot_cli(diot, "clean", "channels", *DEVICE, "--json"))
        assert channels == [{"channel": n, "feature": 0, "name": "empty"} for n in range(1, 10)]
        rates = ok(diot_cli(diot, "clean", "rates", *DEVICE, "--json"))
        assert rates == [{"channel": n, "intervalMilliseconds": 0, "automatic": True} for n in range(1, 10)]
    finally:
        assert ok(diot_cli(diot, "debug", *DEVICE, "reset", "--json")) == [{"command": "reset", "answer": "ok\n"}]
    assert features_by_code(diot)[7]["value"] == 25.0
    assert ok(diot_cli(diot, "rates", *DEVICE, "--channel", "1", "--json"))[0]["intervalMilliseconds"] == 1000


def test_data_follows_the_channel_rate(diot):
    try:
        ok(diot_cli(diot, "set-rate", *DEVICE, "--channel", "1", "--interval", "100", "--json"))
        values = ok(diot_cli(diot, "data", *DEVICE, "--channel", "1", "--duration", "2", "--json"))
        # Every 100 ms for 2 s: about 20 (at the start-up rate of 1000 ms it would be 2 or 3).
        assert len(values) >= 6, values
        assert all(value == {"channel": 1, "code": 7, "name": "temperature", "type": "float", "value": 25.0} for value in values)
    finally:
        assert diot_cli(diot, "debug", *DEVICE, "reset").returncode == 0


def test_data_on_an_automatic_channel_comes_with_each_change(diot):
    try:
        ok(diot_cli(diot, "set-channel", *DEVICE, "--channel", "4", "--feature", "18", "--json"))
        started = time.monotonic()
        values = ok(diot_cli(diot, "data", *DEVICE, "--channel", "4", "--count", "3", "--json"))
        assert time.monotonic() - started < 30
        assert [value["name"] for value in values] == ["activityStepCounter"] * 3
        steps = [value["value"] for value in values]
        assert steps[0] < steps[1] < steps[2], steps  # the counter changes once a second
    finally:
        assert diot_cli(diot, "debug", *DEVICE, "reset").returncode == 0


def test_debug_console(diot):
    assert ok(diot_cli(diot, "debug", *DEVICE, "help", "--json")) == [
        {"command": "help", "answer": "commands: help, version, echo <text>, reset\n"}]  # 44 bytes: three notifications
    assert ok(diot_cli(diot, "debug", *DEVICE, "version", "--json"))[0]["answer"] == "DIoT simulator 1.0.0\n"
    echo = diot_cli(diot, "debug", *DEVICE, "echo", "hello", "there")
    assert echo.returncode == 0, echo.stderr
    assert echo.stdout == "hello there\n"
    assert ok(diot_cli(diot, "debug", *DEVICE, "selftest", "--json"))[0]["answer"] == "unknown: selftest\n"


def test_a_request_the_device_ignores_times_out(diot):
    # Feature code 99 is not in the device's table: it does not answer.
    result = diot_cli(diot, "features", *DEVICE, "--code", "99", "--reply-timeout", "1")
    assert result.returncode != 0
    assert "timeout" in result.stderr and "fetchFeature" in result.stderr


def test_arguments_are_checked_before_connecting(diot):
    for arguments in (
        ["set-channel", *DEVICE, "--channel", "10", "--feature", "7"],
        ["set-feature", *DEVICE, "--code", "temperature", "--value", "warm"],
        ["set-feature", *DEVICE, "--code", "noSuchFeature", "--value", "1"],
        ["clean", "features", *DEVICE, "--channel", "1"],
    ):
        result = diot_cli(diot, *arguments)
        assert result.returncode != 0 and "Error" in result.stderr, arguments


def test_an_address_nobody_advertises_is_not_found(diot):
    result = diot_cli(diot, "info", "--adapter", "hci0", "--address", "00:11:22:33:44:99", "--timeout", "2")
    assert result.returncode != 0 and "peripheralNotFound" in result.stderr


def test_a_missing_service_is_named_and_the_rest_still_works(bare_diot):
    # No battery service: the device still opens (battery notifications only when present).
    features = ok(diot_cli(bare_diot, "features", *DEVICE, "--code", "temperature", "--json"))
    assert features == [{"code": 7, "name": "temperature", "type": "float", "value": 25.0}]
    result = diot_cli(bare_diot, "info", *DEVICE, "--json")
    assert result.returncode != 0
    assert "gattAttributeNotFound" in result.stderr and "180F" in result.stderr
