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


PET_HOUSE = os.path.join(os.path.dirname(__file__), "..", "..", "products", "pet-house.json")


def free_udp_port():
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("encoding", ["esptouch-v1", "esptouch-v2", "airkiss"])
def test_onboard_the_agent(encoding, tmp_path):
    # The agent's device waits for credentials on a UDP port; `tether onboard airlink` sends them
    # as datagram lengths; the device decodes them, takes the network and answers.
    ack = free_udp_port()
    agent = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--product", PET_HOUSE, "--bind", "127.0.0.1", "--udp-port", "0", "--tcp-port", "0",
         "--provisioning", "airlink", "--airlink-port", "0", "--airlink-ack-port", str(ack), "--airlink-key", "1234567890123456",
         "--interval", "0", "--announce", "none", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        listening = json.loads(agent.stdout.readline())
        assert listening["provisioning"] == "airlink"
        device = json.loads(agent.stdout.readline())
        trace = tmp_path / "trace.json"
        extra = ["--aes-key", "1234567890123456"] if encoding == "esptouch-v2" else []
        result = subprocess.run(
            [os.path.join(BIN, "tether"), "onboard", "airlink", "--encoding", encoding, "--ssid-hex", "486f6d654e6574",
             "--password-hex", "636f727265637420686f727365", "--ip", "127.0.0.1", "--target", f"127.0.0.1:{listening['port']}",
             "--listen", "127.0.0.1", "--ack-port", str(ack), "--interval-ms", "0", "--timeout", "20", "--trace", str(trace), "--json", *extra],
            capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        out = json.loads(result.stdout)
        assert out["state"] == "acknowledged" and out["ip"] == "127.0.0.1"
        assert out["mac"] == (None if encoding == "airkiss" else device["mac"])
        recorded = json.loads(trace.read_text())
        assert recorded["outcome"] == "acknowledged" and any(e["event"] == "answer_received" for e in recorded["entries"])
        assert "correct horse" not in trace.read_text() and "1234567890123456" not in trace.read_text()
    finally:
        agent.terminate()
        _, stderr = agent.communicate(timeout=10)
    assert 'onboarded to Wi-Fi "HomeNet"' in stderr


def test_onboard_nobody_answers(tmp_path):
    ack = free_udp_port()
    result = subprocess.run(
        [os.path.join(BIN, "tether"), "onboard", "airlink", "--encoding", "esptouch-v1", "--ssid-hex", "486f6d654e6574",
         "--password-hex", "70617373", "--ip", "127.0.0.1", "--target", f"127.0.0.1:{free_udp_port()}", "--listen", "127.0.0.1",
         "--ack-port", str(ack), "--interval-ms", "0", "--timeout", "1", "--trace", str(tmp_path / "t.json"), "--json"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    out = json.loads(result.stdout)
    assert out["state"] == "failed" and out["step"] == "device_acknowledged" and out["code"] == "timeout"
    assert json.loads((tmp_path / "t.json").read_text())["outcome"] == "failed"


def test_onboard_softap_the_agent(tmp_path):
    # `tether onboard softap` against the agent's GAgent device in SoftAP mode, announcing to the CLI.
    announcements = free_udp_port()
    agent = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--product", PET_HOUSE, "--bind", "127.0.0.1", "--udp-port", "0", "--tcp-port", "0",
         "--softap", "--interval", "0", "--announce", f"127.0.0.1:{announcements}", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        device = json.loads(agent.stdout.readline())
        trace = tmp_path / "trace.json"
        result = subprocess.run(
            [os.path.join(BIN, "tether"), "onboard", "softap", "--device", f"127.0.0.1:{device['udpPort']}", "--listen", "127.0.0.1",
             "--announcement-port", str(announcements), "--wifi-ssid", "HomeNet", "--wifi-password", "correct horse", "--timeout", "10",
             "--json", "--trace", str(trace)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        out = json.loads(result.stdout)
        assert out["state"] == "seen_on_lan" and out["did"] == device["did"] and out["mac"] == device["mac"]
        assert "correct horse" not in trace.read_text()
    finally:
        agent.terminate()
        _, stderr = agent.communicate(timeout=10)
    assert 'onboarded to Wi-Fi "HomeNet"' in stderr
