"""The agent's ESP-IDF provisioning (SoftAP HTTP, protocomm) against Espressif's own client: esp_prov's
code as PyPI esp-rainmaker-cli ships it (prov_util), on 127.0.0.1 (its command lines hard-code
192.168.4.1). Security 0 and 1 reach "connected"; a wrong proof of possession fails the session; a
wrong Wi-Fi password and an unknown network report the station's failure. Security 2 (SRP-6a) with
sec_patch_ver 0 and 1 reaches "connected"; a wrong SRP password fails the session."""
import json
import os
import subprocess
import time

import pytest
from rmaker_tools.rmaker_prov.prov import prov_util

from conftest import BIN

PET_HOUSE = os.path.join(os.path.dirname(__file__), "..", "..", "products", "pet-house.json")


class Agent:
    def __init__(self, tmp_path, security, pop=None, patch=1):
        networks = tmp_path / "networks.json"
        networks.write_text(json.dumps([{"ssid": "HomeNet", "password": "correct horse"}, {"ssid": "Guest", "password": ""}]))
        extra = ["--pop", pop] if pop is not None else []
        if security == 2:
            extra += ["--sec2-username", "wifiprov", "--sec2-password", "abcd1234", "--sec2-patch-version", str(patch)]
        self.process = subprocess.Popen(
            [os.path.join(BIN, "tether-agent"), "simulate", "--product", PET_HOUSE, "--bind", "127.0.0.1", "--provisioning", "esp-idf",
             "--prov-port", "0", "--security", str(security), "--wifi-networks", str(networks), "--udp-port", "0", "--tcp-port", "0",
             "--interval", "0", "--announce", "none", "--json", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = json.loads(self.process.stdout.readline())
        assert line["provisioning"] == "esp-idf" and line["security"] == security
        self.port = line["port"]

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.process.terminate()
        self.stderr = self.process.communicate(timeout=10)[1]


def provision(port, security, ssid, password, pop=None, srp_password="abcd1234"):
    transport = prov_util.get_transport("softap", f"127.0.0.1:{port}")
    version = json.loads(prov_util.get_version(transport))
    assert version["prov"]["ver"] == "v1.1" and version["prov"]["sec_ver"] == security
    if security == 2:
        session = prov_util.get_security(2, sec_patch_ver=prov_util.get_sec_patch_ver(transport), username="wifiprov", password=srp_password)
    else:
        session = prov_util.get_security(security, pop=pop)
    if not prov_util.establish_session(transport, session):
        return None
    assert prov_util.send_wifi_config(transport, session, ssid, password)
    assert prov_util.apply_wifi_config(transport, session)
    return settled(transport, session)


def settled(transport, session):
    """The station's state once it is no longer connecting, polled as esp_prov's own main does."""
    state = "connecting"
    for _ in range(100):
        state = prov_util.get_wifi_config(transport, session)
        if state != "connecting":
            break
        time.sleep(0.05)
    return state


@pytest.mark.parametrize("security,pop", [(0, None), (1, "abcd1234"), (1, "")])
def test_esp_prov_reaches_connected(tmp_path, security, pop):
    with Agent(tmp_path, security, pop) as agent:
        assert provision(agent.port, security, "HomeNet", "correct horse", pop) == "connected"
    assert 'onboarded to Wi-Fi "HomeNet"' in agent.stderr


@pytest.mark.parametrize("patch", [0, 1])
def test_esp_prov_security_2(tmp_path, patch):
    with Agent(tmp_path, 2, patch=patch) as agent:
        assert provision(agent.port, 2, "HomeNet", "correct horse") == "connected"
    assert 'onboarded to Wi-Fi "HomeNet"' in agent.stderr


def test_esp_prov_security_2_wrong_password(tmp_path):
    with Agent(tmp_path, 2) as agent:
        try:
            result = provision(agent.port, 2, "HomeNet", "correct horse", srp_password="not-the-password")
        except RuntimeError:
            result = None
        assert result is None
    assert "onboarded" not in agent.stderr


def test_wrong_pop_fails_the_session(tmp_path):
    with Agent(tmp_path, 1, "abcd1234") as agent:
        transport = prov_util.get_transport("softap", f"127.0.0.1:{agent.port}")
        session = prov_util.get_security(1, pop="wrong-pop")
        try:
            established = prov_util.establish_session(transport, session)
        except RuntimeError:
            established = False
        assert not established
    assert "onboarded" not in agent.stderr


@pytest.mark.parametrize("ssid,password", [("HomeNet", "wrong horse"), ("NoSuchNet", "whatever")])
def test_station_failures_are_reported(tmp_path, ssid, password):
    with Agent(tmp_path, 1, "abcd1234") as agent:
        assert provision(agent.port, 1, ssid, password, "abcd1234") == "failed"
    assert "onboarded" not in agent.stderr


def onboard(port, security, ssid, password, tmp_path, pop=None):
    trace = tmp_path / "trace.json"
    extra = ["--pop", pop] if pop is not None else []
    if security == 2:
        extra += ["--sec2-username", "wifiprov", "--sec2-password", "abcd1234"]
    result = subprocess.run(
        [os.path.join(BIN, "tether"), "onboard", "esp", "--device", f"127.0.0.1:{port}", "--security", str(security), *extra,
         "--wifi-ssid", ssid, "--wifi-password", password, "--json", "--trace", str(trace), "--timeout", "5"],
        capture_output=True, text=True, timeout=60)
    return result, json.loads(result.stdout), trace.read_text()


@pytest.mark.parametrize("security,pop,patch", [(0, None, 1), (1, "abcd1234", 1), (2, None, 0), (2, None, 1)])
def test_sdk_onboards_the_agent(tmp_path, security, pop, patch):
    # The SDK's ESP-IDF client (through `tether onboard esp`) against the agent that esp_prov validates above.
    with Agent(tmp_path, security, pop, patch) as agent:
        result, out, trace = onboard(agent.port, security, "HomeNet", "correct horse", tmp_path, pop)
        assert result.returncode == 0, result.stderr
        assert out == {"ip": "192.168.1.23", "state": "connected"}
        assert "correct horse" not in trace and "abcd1234" not in trace and json.loads(trace)["outcome"] == "connected"
    assert 'onboarded to Wi-Fi "HomeNet"' in agent.stderr


@pytest.mark.parametrize("ssid,password,pop,step,code", [
    ("HomeNet", "correct horse", "wrong-pop", "establishing_session", "sessionNegotiationFailed"),
    ("HomeNet", "wrong horse", "abcd1234", "joining_network", "wifiAuthenticationFailed"),
    ("NoSuchNet", "whatever", "abcd1234", "joining_network", "wifiNetworkNotFound"),
])
def test_sdk_failures_name_their_step(tmp_path, ssid, password, pop, step, code):
    with Agent(tmp_path, 1, "abcd1234") as agent:
        result, out, trace = onboard(agent.port, 1, ssid, password, tmp_path, pop)
        assert result.returncode != 0
        assert out["step"] == step and out["code"] == code, out
        assert password not in trace and pop not in trace and json.loads(trace)["outcome"] == "failed"


def test_sdk_no_device(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result, out, _ = onboard(port, 1, "HomeNet", "pw", tmp_path, "x")
    assert result.returncode != 0 and out["step"] == "connecting_to_device" and out["code"] == "connectionFailed"


@pytest.mark.parametrize("security", [1, 2])
def test_scan(tmp_path, security):
    # The device's network list before the user chooses ("AP+"), read by Espressif's client and by the SDK.
    with Agent(tmp_path, security, "abcd1234" if security == 1 else None) as agent:
        transport = prov_util.get_transport("softap", f"127.0.0.1:{agent.port}")
        assert prov_util.has_capability(transport, "wifi_scan")
        if security == 2:
            session = prov_util.get_security(2, sec_patch_ver=1, username="wifiprov", password="abcd1234")
        else:
            session = prov_util.get_security(1, pop="abcd1234")
        assert prov_util.establish_session(transport, session)
        aps = prov_util.scan_wifi_APs("softap", transport, session)
        assert [ap["ssid"] for ap in aps] == ["HomeNet", "Guest"]
        assert aps[0]["rssi"] == -40 and aps[1]["auth"] == "Open" and aps[0]["auth"] == "WPA2_PSK"
        extra = ["--pop", "abcd1234"] if security == 1 else ["--sec2-username", "wifiprov", "--sec2-password", "abcd1234"]
        result = subprocess.run(
            [os.path.join(BIN, "tether"), "onboard", "esp", "--device", f"127.0.0.1:{agent.port}", "--security", str(security), *extra,
             "--scan", "--json"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        listed = json.loads(result.stdout)
        assert [n["ssid"] for n in listed] == ["HomeNet", "Guest"] and listed[0]["rssi"] == -40 and listed[1]["auth"] == 0


@pytest.mark.parametrize("command", ["reset", "reprov"])
def test_ctrl_after_a_failed_join(tmp_path, command):
    # A wrong password, then prov-ctrl, then the right one on the same session: connected.
    with Agent(tmp_path, 1, "abcd1234") as agent:
        transport = prov_util.get_transport("softap", f"127.0.0.1:{agent.port}")
        session = prov_util.get_security(1, pop="abcd1234")
        assert prov_util.establish_session(transport, session)
        assert prov_util.send_wifi_config(transport, session, "HomeNet", "wrong horse")
        assert prov_util.apply_wifi_config(transport, session)
        assert settled(transport, session) == "failed"
        assert (prov_util.ctrl_reset if command == "reset" else prov_util.ctrl_reprov)(transport, session)
        assert prov_util.get_wifi_config(transport, session) == "disconnected"
        assert prov_util.send_wifi_config(transport, session, "HomeNet", "correct horse")
        assert prov_util.apply_wifi_config(transport, session)
        assert settled(transport, session) == "connected"
        # Once connected there is nothing to reset: the device refuses.
        with pytest.raises(RuntimeError, match="CtrlReset failed"):
            prov_util.ctrl_reset(transport, session)
    assert 'onboarded to Wi-Fi "HomeNet"' in agent.stderr


def test_hostile_requests_are_refused_and_the_device_carries_on(tmp_path):
    import http.client
    with Agent(tmp_path, 0) as agent:
        def post(connection, path, body):
            connection.request("POST", path, body, {"Content-type": "application/x-www-form-urlencoded"})
            response = connection.getresponse()
            return response.status, response.read()

        connection = http.client.HTTPConnection("127.0.0.1", agent.port, timeout=10)
        assert post(connection, "/prov-session", bytes.fromhex("5203a20100"))[0] == 200
        # A scan page far past the end, with a count that would overflow: an empty, typed answer.
        status, body = post(connection, "/prov-scan", bytes.fromhex("0804720c0801") + bytes.fromhex("10ffffffffffffffff7f"))
        assert status == 200
        # Garbage where a message belongs: refused.
        assert post(connection, "/prov-config", b"\xff\xff\xff")[0] == 400
        assert post(connection, "/no-such-endpoint", b"x")[0] == 404
        # A body over the limit: one 413, and the connection closed.
        assert post(connection, "/prov-config", b"\x00" * (16 * 1024 + 1))[0] == 413
        connection.close()
        again = http.client.HTTPConnection("127.0.0.1", agent.port, timeout=10)
        assert json.loads(post(again, "/proto-ver", b"---")[1])["prov"]["sec_ver"] == 0
        again.close()
    assert agent.process.returncode in (0, -15)
