"""The SDK's Tuya client (through `tether tuya`) against tuyamock, a protocol-faithful device mock
(PyPI, pinned with the tinytuya it needs): every version reads and writes; a wrong local key, and a
device that goes dark, fail with typed errors."""
import json
import os
import subprocess
import sys
import time

import pytest
import tinytuya
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


class Agent:
    """`tether-agent simulate --protocol tuya` as a process: the pet house as a Tuya device."""

    def __init__(self, version, interval="0", *extra):
        self.version = version
        self.process = subprocess.Popen(
            [os.path.join(BIN, "tether-agent"), "simulate", "--protocol", "tuya", "--version", version, "--bind", "127.0.0.1",
             "--tuya-port", "0", "--tuya-id", DEVICE_ID, "--local-key", KEY, "--product", PET_HOUSE, "--json", "--interval", interval, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        line = json.loads(self.process.stdout.readline())
        assert line["protocol"] == "tuya" and line["id"] == DEVICE_ID and "localKey" not in line
        self.port = line["port"]

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.process.terminate()
        self.process.wait(timeout=10)

    def tinytuya(self):
        return tinytuya.Device(DEVICE_ID, "127.0.0.1", KEY, version=float(self.version), port=self.port)


PET_HOUSE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "products", "pet-house.json")


@pytest.mark.parametrize("version", VERSIONS)
def test_tinytuya_against_the_agent(version):
    with Agent(version) as agent:
        device = agent.tinytuya()
        status = device.status()
        assert "Error" not in status, status
        assert status["dps"]["0"] is False and status["dps"]["2"] == 0
        answer = device.set_value("0", True)
        assert answer["dps"] == {"0": True}, answer
        device.set_value("2", 100)
        assert device.status()["dps"]["2"] == 100
        # The Swift client reads what tinytuya wrote, on the same one-client-at-a-time device.
        named = json.loads(tuya("status", "--host", "127.0.0.1", "--port", str(agent.port), "--id", DEVICE_ID, "--version", version,
                                "--product", PET_HOUSE, "--json").stdout)
        assert named["data"]["LED_OnOff"] is True and named["data"]["LED_R"] == 100


@pytest.mark.parametrize("version", ["3.3", "3.5"])
def test_pushed_updates(version):
    # The simulator changes its sensors every 0.3 s; a persistent tinytuya connection hears each.
    with Agent(version, interval="0.3") as agent:
        device = agent.tinytuya()
        device.set_socketPersistent(True)
        assert "dps" in device.status()
        pushed = None
        for _ in range(20):
            message = device.receive()
            if message and "dps" in message:
                pushed = message
                break
        assert pushed is not None, "no STATUS push"
        device.close()


def test_simulated_faults():
    # --go-dark-after: after 2 frames sent, nothing for 1.5 s, then answers again; --response-delay
    # holds every answer back. tinytuya sees an error, then the device again.
    with Agent("3.3", "0", "--go-dark-after", "2", "--dark-for", "1.5", "--response-delay", "100") as agent:
        device = tinytuya.Device(DEVICE_ID, "127.0.0.1", KEY, version=3.3, port=agent.port, connection_timeout=1, connection_retry_limit=1,
                                 connection_retry_delay=0)
        assert "dps" in device.status()
        assert "dps" in device.status()
        dark = device.status()
        assert dark is None or "Error" in dark, dark
        time.sleep(1.6)
        assert "dps" in device.status()


def test_wrong_key_against_the_agent():
    with Agent("3.4") as agent:
        device = tinytuya.Device(DEVICE_ID, "127.0.0.1", "wrongwrongwrong0", version=3.4, port=agent.port)
        device.set_socketRetryLimit(1)
        device.set_socketTimeout(2)
        assert "Error" in device.status()
        # The agent is still there for the right key.
        assert "dps" in agent.tinytuya().status()


@pytest.mark.parametrize("version", VERSIONS)
def test_announcements(version):
    """The agent's beacons, sent to a loopback port: tinytuya's own decoder reads them, and
    `tether tuya scan` lists the device."""
    import socket
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(5)
    port = listener.getsockname()[1]
    process = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--protocol", "tuya", "--version", version, "--bind", "127.0.0.1",
         "--tuya-port", "0", "--tuya-id", DEVICE_ID, "--local-key", KEY, "--product", PET_HOUSE, "--json", "--interval", "0",
         "--announce", f"127.0.0.1:{port}", "--announce-interval", "0.3"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        datagram, _ = listener.recvfrom(4096)
        decoded = json.loads(tinytuya.decrypt_udp(datagram))
        assert decoded["gwId"] == DEVICE_ID and decoded["version"] == version, decoded
        listener.close()
        found = subprocess.run(
            [os.path.join(BIN, "tether"), "tuya", "scan", "--listen", "127.0.0.1", "--port", str(port), "--timeout", "1.5", "--json"],
            capture_output=True, text=True, timeout=30,
        )
        assert found.returncode == 0, found.stderr
        assert [(d["id"], d["host"], d["version"]) for d in json.loads(found.stdout)] == [(DEVICE_ID, "127.0.0.1", version)]
    finally:
        process.terminate()
        process.wait(timeout=10)


NETNS = os.geteuid() == 0 and os.path.exists("/usr/sbin/ip")


@pytest.mark.skipif(not NETNS, reason="needs root and iproute2 to create network namespaces; tinytuya's scanner broadcasts")
@pytest.mark.parametrize("version", ["3.3", "3.5"])
def test_tinytuya_scanner_in_network_namespaces(version):
    """tinytuya's own scanner (it broadcasts, and needs a default route) finds the agent's device,
    inside two network namespaces joined by a veth pair that the test creates and removes."""
    suffix = f"{os.getpid() % 10000}{version[-1]}"
    app, device = f"tt-app-{suffix}", f"tt-dev-{suffix}"

    def ip(*arguments):
        subprocess.run(["/usr/sbin/ip", *arguments], check=True, capture_output=True)

    ip("netns", "add", app)
    ip("netns", "add", device)
    agent = None
    try:
        ip("-n", app, "link", "add", f"ta{suffix}", "type", "veth", "peer", "name", f"td{suffix}", "netns", device)
        ip("-n", app, "addr", "add", "10.78.0.1/24", "broadcast", "10.78.0.255", "dev", f"ta{suffix}")
        ip("-n", device, "addr", "add", "10.78.0.2/24", "broadcast", "10.78.0.255", "dev", f"td{suffix}")
        for namespace, link in [(app, f"ta{suffix}"), (device, f"td{suffix}")]:
            ip("-n", namespace, "link", "set", "lo", "up")
            ip("-n", namespace, "link", "set", link, "up")
            ip("-n", namespace, "route", "add", "default", "dev", link)
        agent = subprocess.Popen(
            ["/usr/sbin/ip", "netns", "exec", device, os.path.join(BIN, "tether-agent"), "simulate", "--protocol", "tuya", "--version", version,
             "--bind", "0.0.0.0", "--tuya-id", DEVICE_ID, "--local-key", KEY, "--product", PET_HOUSE, "--json", "--interval", "0",
             "--announce-interval", "0.5"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        assert json.loads(agent.stdout.readline())["id"] == DEVICE_ID
        script = ("import json, tinytuya.scanner as s; "
                  "found = s.devices(verbose=False, scantime=3, poll=False, color=False, assume_yes=True); "
                  "print(json.dumps(found))")
        scanned = subprocess.run(["/usr/sbin/ip", "netns", "exec", app, sys.executable, "-c", script],
                                 capture_output=True, text=True, timeout=60)
        assert scanned.returncode == 0, scanned.stderr
        found = json.loads(scanned.stdout.strip().splitlines()[-1])
        entries = list(found.values())
        assert any(entry.get("gwId") == DEVICE_ID and entry.get("ip") == "10.78.0.2" and entry.get("version") == version for entry in entries), found
    finally:
        if agent is not None:
            agent.terminate()
            agent.wait(timeout=10)
        subprocess.run(["/usr/sbin/ip", "netns", "del", device], capture_output=True)
        subprocess.run(["/usr/sbin/ip", "netns", "del", app], capture_output=True)


def test_lan_side_stopped_and_started():
    """SIGUSR1 takes the agent's Tuya side down (as a device that drops off the network), SIGUSR2
    brings it back on the same port: clients fail with a typed error, then work again."""
    import signal
    import time
    with Agent("3.4") as agent:
        where_agent = ["--host", "127.0.0.1", "--port", str(agent.port), "--id", DEVICE_ID, "--version", "3.4", "--timeout", "2"]
        assert tuya("status", *where_agent, "--json").returncode == 0
        agent.process.send_signal(signal.SIGUSR1)
        deadline = time.time() + 10
        while True:
            down = tuya("status", *where_agent, "--json", check=False)
            if down.returncode != 0 or time.time() > deadline:
                break
            time.sleep(0.2)
        assert down.returncode != 0 and "connectionFailed" in down.stderr, down.stderr
        agent.process.send_signal(signal.SIGUSR2)
        deadline = time.time() + 10
        while True:
            up = tuya("status", *where_agent, "--json", check=False)
            if up.returncode == 0 or time.time() > deadline:
                break
            time.sleep(0.2)
        assert up.returncode == 0, up.stderr
        assert "dps" in json.loads(up.stdout)


def test_probe_answered():
    """A 3.5 device answers an app's REQ_DEVINFO probe with its announcement, to the address the
    probe names: found without waiting for a beacon (announcements are off here)."""
    import socket
    process = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--protocol", "tuya", "--version", "3.5", "--bind", "127.0.0.1", "--tuya-port", "0",
         "--probe-port", "0", "--tuya-id", DEVICE_ID, "--local-key", KEY, "--product", PET_HOUSE, "--json", "--interval", "0", "--announce", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        probe_port = json.loads(process.stdout.readline())["probePort"]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as unused:
            unused.bind(("127.0.0.1", 0))
            quiet_port = unused.getsockname()[1]
        found = subprocess.run(
            [os.path.join(BIN, "tether"), "tuya", "scan", "--listen", "127.0.0.1", "--port", str(quiet_port), "--probe", f"127.0.0.1:{probe_port}",
             "--timeout", "1", "--json"],
            capture_output=True, text=True, timeout=30,
        )
        assert found.returncode == 0, found.stderr
        assert [(d["id"], d["version"]) for d in json.loads(found.stdout)] == [(DEVICE_ID, "3.5")]
    finally:
        process.terminate()
        process.wait(timeout=10)
