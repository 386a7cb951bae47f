"""`tether onboard airlink --dry-run --json` against airlink-vectors.json (made by the vendors' own
encoders): the command line the acceptance checks drive, for every vector."""
import json
import os
import subprocess

import pytest

from conftest import BIN

VECTORS = json.load(open(os.path.join(os.path.dirname(__file__), "..", "Fixtures", "airlink-vectors.json")))


def airlink(*arguments):
    result = subprocess.run([os.path.join(BIN, "tether"), "onboard", "airlink", *arguments, "--dry-run", "--json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("vector", VECTORS["esptouch_v1"], ids=lambda v: v["name"])
def test_esptouch_v1(vector):
    extra = [] if vector["hidden"] else ["--ssid-visible"]
    out = airlink("--encoding", "esptouch-v1", "--ssid-hex", vector["ssid_hex"], "--password-hex", vector["password_hex"],
                  "--bssid", vector["bssid"], "--ip", vector["ip"], *extra)
    assert out["guide"] == vector["guide"]
    assert out["datum"] == vector["datum"]
    assert out["data_hex"] == vector["data_hex"]


@pytest.mark.parametrize("vector", VECTORS["esptouch_v2"], ids=lambda v: v["name"])
def test_esptouch_v2(vector):
    extra = ["--reserved-hex", vector["reserved_hex"], "--port-index", str(vector["port_mark"])]
    if vector["aes_key"]:
        extra += ["--aes-key", vector["aes_key"]]
    out = airlink("--encoding", "esptouch-v2", "--ssid-hex", vector["ssid_hex"], "--password-hex", vector["password_hex"],
                  "--bssid", vector["bssid"], "--ip", vector["ip"], *extra)
    assert out["head_hex"] == vector["head_hex"]
    assert len(out["packets"]) == len(vector["packets"])
    # The padding is random, as in the apps: every other position is exactly the vendor's.
    random_positions = set(vector["random_positions"])
    assert [p for i, p in enumerate(out["packets"]) if i not in random_positions] == \
        [p for i, p in enumerate(vector["packets"]) if i not in random_positions]


@pytest.mark.parametrize("vector", VECTORS["airkiss"], ids=lambda v: v["name"])
def test_airkiss(vector):
    out = airlink("--encoding", "airkiss", "--ssid-hex", vector["ssid_hex"], "--password-hex", vector["password_hex"],
                  "--random", str(vector["random"]))
    assert out["magic"] == vector["magic"] and out["prefix"] == vector["prefix"]
    assert out["lengths"] == vector["lengths"]


def test_bad_input_is_refused():
    result = subprocess.run([os.path.join(BIN, "tether"), "onboard", "airlink", "--encoding", "airkiss", "--ssid-hex", "zz",
                             "--dry-run", "--json"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "hex" in result.stderr
