"""The SDK's Tuya client (through `tether tuya`) against tuyamock, a protocol-faithful device mock
(PyPI, pinned with the tinytuya it needs): every version reads and writes; a wrong local key, and a
device that goes dark, fail with typed errors."""
import json
import os
import subprocess

import pytest
import tuyamock

from conftest import BIN

KEY = "thisisarealkey00"
DEVICE_ID = "eb0123456789abcdefghij"
VERSIONS = ["3.1", "3.3", "3.4", "3.5"]


def tuya(*arguments, key=KEY, check=True):
    result = subprocess.run(
        [os.path.join(BIN, "tether"), "tuya", *arguments, "--local-key", key],
        capture_output=True, text=True, timeout=60,
    )
    if check:
        assert result.returncode == 0, f"tether tuya {' '.join(arguments)}: {result.stderr}"
    return result


def where(mock, version):
    return ["--host", "127.0.0.1", "--port", str(mock.port), "--id", DEVICE_ID, "--version", version]


@pytest.mark.parametrize("version", VERSIONS)
def test_status_and_set(version):
    with tuyamock.MockDevice(local_key=KEY, version=version, dps={"1": True, "2": 50}, port=0) as mock:
        status = json.loads(tuya("status", *where(mock, version), "--json").stdout)
        assert status == {"dps": {"1": True, "2": 50}}
        after = json.loads(tuya("set", *where(mock, version), "1=false", "2=7", "--json").stdout)
        assert after["dps"]["1"] is False and after["dps"]["2"] == 7
        assert mock.dps["1"] is False and mock.dps["2"] == 7
        # The device serves one client at a time: each command's connection is closed after it.
        assert json.loads(tuya("status", *where(mock, version), "--json").stdout)["dps"]["2"] == 7


def test_named_data_points(tmp_path):
    product = tmp_path / "plug.json"
    product.write_text(json.dumps({
        "name": "Plug", "packetVersion": "0x00000004", "protocolType": "standard", "product_key": "keydeadbeef12345",
        "entities": [{"name": "entity0", "id": 0, "attrs": [
            {"name": "switch", "data_type": "bool", "type": "status_writable", "id": 1,
             "position": {"byte_offset": 0, "unit": "bit", "len": 1, "bit_offset": 0}},
            {"name": "brightness", "data_type": "uint8", "type": "status_writable", "id": 2,
             "position": {"byte_offset": 1, "unit": "byte", "len": 1, "bit_offset": 0},
             "uint_spec": {"addition": 0, "max": 100, "ratio": 1, "min": 0}},
        ]}],
    }))
    with tuyamock.MockDevice(local_key=KEY, version="3.4", dps={"1": True, "2": 50}, port=0) as mock:
        named = json.loads(tuya("status", *where(mock, "3.4"), "--product", str(product), "--json").stdout)
        assert named == {"data": {"switch": True, "brightness": 50}}
        tuya("set", *where(mock, "3.4"), "--product", str(product), "brightness=80", "switch=false")
        assert mock.dps["1"] is False and mock.dps["2"] == 80
        refused = tuya("set", *where(mock, "3.4"), "--product", str(product), "brightness=900", check=False)
        assert refused.returncode != 0 and "valueOutOfRange" in refused.stderr


@pytest.mark.parametrize("version,code", [("3.3", "timeout"), ("3.4", "sessionNegotiationFailed"), ("3.5", "sessionNegotiationFailed")])
def test_wrong_local_key(version, code):
    with tuyamock.MockDevice(local_key=KEY, version=version, dps={"1": True}, port=0) as mock:
        refused = tuya("status", *where(mock, version), "--json", "--timeout", "2", key="wrongwrongwrong0", check=False)
        assert refused.returncode != 0 and code in refused.stderr, refused.stderr
        assert mock.dps == {"1": True}


def test_device_that_goes_dark():
    with tuyamock.MockDevice(local_key=KEY, version="3.5", dps={"1": True}, port=0, go_dark_after=1) as mock:
        # Its first answer (the negotiation's) comes; nothing after it.
        refused = tuya("status", *where(mock, "3.5"), "--json", "--timeout", "2", check=False)
        assert refused.returncode != 0 and "timeout" in refused.stderr, refused.stderr
