"""Onboarding to the binding, every part a process on loopback: the cloud (`tether-cloud serve`), the
agent's device waiting for credentials over ESP-IDF provisioning with its cloud link
(`tether-agent simulate --provisioning esp-idf --cloud`), and the app: the SDK in `tether onboard esp
--pair`, and Espressif's own client (esp_prov's prov_util) carrying a pairing token on the custom
endpoint `tether-pairing`. The simulated router's faults reach the CLI as typed errors."""
import json
import os
import re
import subprocess
import time

import pytest
from rmaker_tools.rmaker_prov.prov import prov_util

from conftest import BIN, ROOT
from test_esp_prov import settled
from test_sdk_e2e import PASSWORD, stack, stack_url  # noqa: F401 (the fixture)

PET_HOUSE = os.path.join(ROOT, "products", "pet-house.json")


class Setup:
    def __init__(self, stack, faults=()):
        self.stack = stack
        self.app = stack.admin("app", "create", "--name", "onboarding")
        self.product = stack.admin("product", "create", "--name", "Pet house", "--datapoints", PET_HOUSE)
        self.device = stack.admin("device", "create", "--product", self.product["productKey"], "--name", "new-pet-house")
        credentials = os.path.join(stack.directory, "credentials.json")
        with open(credentials, "w") as file:
            json.dump([self.device], file)
        networks = os.path.join(stack.directory, "networks.json")
        with open(networks, "w") as file:
            json.dump([{"ssid": "HomeNet", "password": "correct horse"}], file)
        fault_flags = [flag for fault in faults for flag in ("--router-fault", fault)]
        self.agent = subprocess.Popen(
            [os.path.join(BIN, "tether-agent"), "simulate", "--product", PET_HOUSE, "--bind", "127.0.0.1", "--provisioning", "esp-idf",
             "--prov-port", "0", "--security", "1", "--pop", "abcd1234", "--wifi-networks", networks, "--udp-port", "0", "--tcp-port", "0",
             "--interval", "0", "--announce", "none", "--json", "--cloud", f"127.0.0.1:{stack.mqtt_port}", "--credentials", credentials,
             *fault_flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = json.loads(self.agent.stdout.readline())
        assert line["provisioning"] == "esp-idf"
        self.port = line["port"]
        self.home = os.path.join(stack.directory, "alice")
        where = ["--cloud", stack_url(stack), "--app-id", self.app["appId"], "--discover", "none"]
        stack.tether(self.home, "register", *where, "--username", "alice", "--password", PASSWORD)

    def tether(self, *arguments, check=True):
        return self.stack.tether(self.home, *arguments, check=check)

    def stop(self):
        self.agent.terminate()
        return self.agent.communicate(timeout=10)[1]


def test_cli_onboards_and_the_cloud_binds(stack):
    setup = Setup(stack)
    try:
        trace = os.path.join(stack.directory, "trace.json")
        result = setup.tether(
            "onboard", "esp", "--device", f"127.0.0.1:{setup.port}", "--security", "1", "--pop", "abcd1234", "--wifi-ssid", "HomeNet",
            "--wifi-password", "correct horse", "--pair", "--product-key", setup.product["productKey"], "--pairing-timeout", "30", "--json",
            "--trace", trace, check=False)
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        assert out["state"] == "bound" and out["did"] == setup.device["did"] and out["productKey"] == setup.product["productKey"]
        recorded = open(trace).read()
        assert json.loads(recorded)["outcome"] == "bound"
        assert "correct horse" not in recorded and "abcd1234" not in recorded and not re.search(r"[0-9a-f]{32}", recorded)
        devices = json.loads(setup.tether("devices", "--json").stdout)
        assert [(d["did"], d["bound"]) for d in devices] == [(setup.device["did"], True)]
    finally:
        stderr = setup.stop()
    assert "paired: bound to the token's user" in stderr


def test_espressif_client_carries_the_token(stack):
    setup = Setup(stack)
    try:
        token = json.loads(setup.tether("onboard", "token", "--product-key", setup.product["productKey"], "--json").stdout)
        assert json.loads(setup.tether("onboard", "token", "--status", token["id"], "--json").stdout)["state"] == "pending"
        transport = prov_util.get_transport("softap", f"127.0.0.1:{setup.port}")
        assert prov_util.has_capability(transport, "tether_pairing")
        session = prov_util.get_security(1, pop="abcd1234")
        assert prov_util.establish_session(transport, session)
        # As esp_prov's custom-data helper does: the session encrypts, the transport carries latin-1 text.
        request = session.encrypt_data(json.dumps({"token": token["token"]}).encode()).decode("latin-1")
        answer = transport.send_data("tether-pairing", request)
        answer = answer.encode("latin-1") if isinstance(answer, str) else answer
        assert json.loads(session.decrypt_data(answer)) == {"status": "ok"}
        assert prov_util.send_wifi_config(transport, session, "HomeNet", "correct horse")
        assert prov_util.apply_wifi_config(transport, session)
        assert settled(transport, session) == "connected"
        deadline = time.time() + 30
        state = None
        while time.time() < deadline:
            state = json.loads(setup.tether("onboard", "token", "--status", token["id"], "--json").stdout)
            if state["state"] != "pending":
                break
            time.sleep(0.3)
        assert state["state"] == "bound" and state["did"] == setup.device["did"]
    finally:
        setup.stop()


@pytest.mark.parametrize("fault,code", [("dhcp-timeout", "noIPAddress"), ("refuse-join", "wifiJoinFailed")])
def test_router_faults_reach_the_cli(stack, fault, code):
    setup = Setup(stack, faults=[fault])
    try:
        result = setup.tether(
            "onboard", "esp", "--device", f"127.0.0.1:{setup.port}", "--security", "1", "--pop", "abcd1234", "--wifi-ssid", "HomeNet",
            "--wifi-password", "correct horse", "--pair", "--json", check=False)
        assert result.returncode == 1
        out = json.loads(result.stdout)
        assert out["code"] == code and out["step"] == "joining_network"
    finally:
        stderr = setup.stop()
    assert "paired" not in stderr
