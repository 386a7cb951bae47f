"""End to end with every part a process on loopback: the cloud (`tether-cloud serve`), the device
agent (`tether-agent simulate --cloud`), and the SDK inside the `tether` CLI. One device is
reachable on the LAN and through the cloud; its LAN side is cut (SIGUSR1) and restored (SIGUSR2),
the cloud is restarted under a running `tether watch`, a device is bound by QR code and unbound,
and a second user sees none of the first's devices."""
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import queue

import pytest

from conftest import BIN, CLOUD_BIN, ROOT, Cloud, free_port, wait_for_port

PASSWORD = "e2e-Passw0rd"


class Stack(Cloud):
    """A cloud that can be stopped and started again on the same ports and database."""

    def __init__(self, directory):
        self.directory = directory
        self.http_port, self.mqtt_port = free_port(), free_port()
        self.udp_port, self.tcp_port = free_port(), free_port()
        self.cloud = None
        self.start_cloud()

    def start_cloud(self):
        self.cloud = subprocess.Popen(
            [os.path.join(CLOUD_BIN, "tether-cloud"), "serve", "--metrics-bind", "none", "--http-port", str(self.http_port), "--mqtt-port", str(self.mqtt_port),
             "--database", f"sqlite:{self.directory}/cloud.sqlite", "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.http_port)
        wait_for_port(self.mqtt_port)

    def stop_cloud(self):
        self.cloud.terminate()
        assert self.cloud.wait(timeout=10) == 0

    def tether(self, home, *arguments, check=True):
        """Runs the CLI as the user whose config and session live in `home`."""
        result = subprocess.run(
            [os.path.join(BIN, "tether"), *arguments], capture_output=True, text=True, timeout=60,
            env={**os.environ, "TETHER_HOME": home},
        )
        if check:
            assert result.returncode == 0, f"tether {' '.join(arguments)}: {result.stderr}"
        return result


class Lines:
    """Reads a process's standard output line by line on a thread, with timeouts."""

    def __init__(self, process):
        self.queue = queue.Queue()
        threading.Thread(target=self._pump, args=(process.stdout,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self.queue.put(line)

    def until(self, predicate, timeout=20):
        deadline = time.time() + timeout
        seen = []
        while time.time() < deadline:
            try:
                line = self.queue.get(timeout=max(0.05, deadline - time.time()))
            except queue.Empty:
                break
            seen.append(line)
            value = json.loads(line)
            if predicate(value):
                return value
        raise AssertionError(f"no matching line within {timeout} s; saw {seen}")


@pytest.fixture
def stack():
    with tempfile.TemporaryDirectory() as directory:
        stack = Stack(directory)
        try:
            yield stack
        finally:
            if stack.cloud.poll() is None:
                stack.stop_cloud()


def test_sdk_end_to_end(stack):
    app = stack.admin("app", "create", "--name", "e2e")
    product = stack.admin("product", "create", "--name", "Pet house", "--datapoints", os.path.join(ROOT, "products", "pet-house.json"))
    lamp = stack.admin("device", "create", "--product", product["productKey"], "--name", "pet-house-1", "--mac", "02:e2:e0:00:00:01")
    spare = stack.admin("device", "create", "--product", product["productKey"], "--name", "pet-house-2", "--mac", "02:e2:e0:00:00:02")
    credentials = os.path.join(stack.directory, "credentials.json")
    with open(credentials, "w") as file:
        json.dump([lamp, spare], file)

    agent = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--product", os.path.join(ROOT, "products", "pet-house.json"),
         "--bind", "127.0.0.1", "--count", "1", "--udp-port", str(stack.udp_port), "--tcp-port", str(stack.tcp_port),
         "--announce", "none", "--interval", "0", "--cloud", f"127.0.0.1:{stack.mqtt_port}", "--credentials", credentials],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    # The spare device is in the cloud only.
    spare_agent = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--product", os.path.join(ROOT, "products", "pet-house.json"),
         "--no-lan", "--interval", "0", "--cloud", f"127.0.0.1:{stack.mqtt_port}", "--credentials", os.path.join(stack.directory, "spare.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ) if _write(os.path.join(stack.directory, "spare.json"), [spare]) else None
    watch = None
    try:
        wait_for_port(stack.tcp_port)
        alice = os.path.join(stack.directory, "alice")
        where = ["--cloud", stack_url(stack), "--app-id", app["appId"], "--discover", f"127.0.0.1:{stack.udp_port}"]
        stack.tether(alice, "register", *where, "--username", "alice", "--password", PASSWORD)
        # Flags given once are remembered in the config file.
        config = json.load(open(os.path.join(alice, "config.json")))
        assert config["appId"] == app["appId"]
        assert "deviceSecret" not in json.dumps(config)
        config["tcpPort"] = stack.tcp_port
        json.dump(config, open(os.path.join(alice, "config.json"), "w"))

        # Discovered on the LAN, not yet bound.
        devices = json.loads(stack.tether(alice, "devices", "--json").stdout)
        assert [(d["did"], d["reachability"], d["bound"]) for d in devices] == [(lamp["did"], "lan", False)]

        # Binding by did and passcode; then the device is on both paths.
        stack.tether(alice, "bind", "--did", lamp["did"], "--passcode", lamp["passcode"], "--alias", "pets")
        devices = json.loads(stack.tether(alice, "devices", "--json").stdout)
        assert [(d["did"], d["reachability"], d["bound"], d["alias"]) for d in devices] == [(lamp["did"], "both", True, "pets")]

        written = stack.tether(alice, "write", lamp["did"], "Motor_Speed=2", "--sn", "41")
        assert "acknowledged sn 41 (LAN)" in written.stdout
        status = json.loads(stack.tether(alice, "status", lamp["did"], "--json").stdout)
        assert status["data"]["Motor_Speed"] == 2

        # A watcher that outlives a LAN outage and a cloud restart.
        watch = subprocess.Popen(
            [os.path.join(BIN, "tether"), "watch", lamp["did"], "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={**os.environ, "TETHER_HOME": alice},
        )
        lines = Lines(watch)
        lines.until(lambda line: line.get("path") == "lan")

        # The LAN goes: the same subscription carries on through the cloud.
        agent.send_signal(signal.SIGUSR1)
        lines.until(lambda line: line.get("path") == "cloud")
        written = stack.tether(alice, "write", lamp["did"], "Motor_Speed=-3", "LED_OnOff=true")
        assert "(cloud)" in written.stdout, written.stdout
        lines.until(lambda line: line.get("data", {}).get("Motor_Speed") == -3)

        # The LAN returns: back to it, with the status read again.
        agent.send_signal(signal.SIGUSR2)
        lines.until(lambda line: line.get("path") == "lan")
        assert "(LAN)" in stack.tether(alice, "write", lamp["did"], "Motor_Speed=1").stdout
        lines.until(lambda line: line.get("data", {}).get("Motor_Speed") == 1)

        # The cloud restarts while the LAN is down: the watcher reconnects and resynchronises.
        agent.send_signal(signal.SIGUSR1)
        lines.until(lambda line: line.get("path") == "cloud")
        stack.stop_cloud()
        stack.start_cloud()
        lines.until(lambda line: line.get("path") == "cloud" or line.get("netStatus") == "controllable", timeout=30)
        # The device's own connection to the cloud comes back on its own schedule.
        deadline = time.time() + 30
        while True:
            written = stack.tether(alice, "write", lamp["did"], "Motor_Speed=4", check=False)
            if written.returncode == 0 or time.time() > deadline:
                break
            time.sleep(0.5)
        assert "(cloud)" in written.stdout, written.stderr
        lines.until(lambda line: line.get("data", {}).get("Motor_Speed") == 4, timeout=30)
        agent.send_signal(signal.SIGUSR2)

        # Remote binding by QR code, and unbinding.
        qr = f"tether://bind?product_key={product['productKey']}&mac=02e2e0000002&product_secret={product['productSecret']}"
        stack.tether(alice, "bind", "--qr", qr)
        dids = {d["did"] for d in json.loads(stack.tether(alice, "devices", "--json", "--discover", "none").stdout)}
        assert dids == {lamp["did"], spare["did"]}
        stack.tether(alice, "unbind", spare["did"])
        dids = {d["did"] for d in json.loads(stack.tether(alice, "devices", "--json", "--discover", "none").stdout)}
        assert dids == {lamp["did"]}

        # Another user sees none of alice's devices, and cannot write to them.
        bob = os.path.join(stack.directory, "bob")
        stack.tether(bob, "register", "--cloud", stack_url(stack), "--app-id", app["appId"], "--discover", "none", "--username", "bob", "--password", PASSWORD)
        assert json.loads(stack.tether(bob, "devices", "--json").stdout) == []
        refused = stack.tether(bob, "write", lamp["did"], "Motor_Speed=0", "--timeout", "2", check=False)
        assert refused.returncode != 0 and "deviceOffline" in refused.stderr

        # A home: bob joins as a member and gets the lamp (on the LAN with a grant, as the agent
        # now takes passcodes only in its binding window); removed, he loses it.
        home = json.loads(stack.tether(alice, "home", "create", "Flat", "--location", "Berlin", "--json").stdout)
        room = json.loads(stack.tether(alice, "home", "add-room", str(home["id"]), "Kitchen", "--json").stdout)
        stack.tether(alice, "home", "place", str(home["id"]), lamp["did"], "--room", str(room["id"]))
        invitation = json.loads(stack.tether(alice, "home", "invite", str(home["id"]), "--username", "bob", "--json").stdout)
        received = json.loads(stack.tether(bob, "home", "invitations", "--json").stdout)
        assert [(i["id"], i["home_name"], i["role"]) for i in received] == [(invitation["id"], "Flat", "member")]
        stack.tether(bob, "home", "accept", str(invitation["id"]))
        bob_config = json.load(open(os.path.join(bob, "config.json")))
        bob_config["tcpPort"] = stack.tcp_port
        json.dump(bob_config, open(os.path.join(bob, "config.json"), "w"))
        lan = ["--discover", f"127.0.0.1:{stack.udp_port}"]
        devices = json.loads(stack.tether(bob, "devices", "--json", *lan).stdout)
        assert [(d["did"], d["role"], d["home"], d["room"]) for d in devices] == [(lamp["did"], "guest", home["id"], room["id"])]
        assert "(LAN)" in stack.tether(bob, "write", lamp["did"], "Motor_Speed=2", *lan).stdout
        shown = json.loads(stack.tether(bob, "home", "show", str(home["id"]), "--json").stdout)
        assert [m["role"] for m in shown["members"]] == ["owner", "member"] and shown["devices"] == [{"did": lamp["did"], "room_id": room["id"]}]
        bob_uid = json.loads(stack.tether(bob, "whoami", "--json").stdout)["uid"]
        stack.tether(alice, "home", "remove", str(home["id"]), "--uid", bob_uid)
        assert json.loads(stack.tether(bob, "home", "list", "--json").stdout) == []
        assert all(d.get("bound") is False for d in json.loads(stack.tether(bob, "devices", "--json", *lan).stdout))
        refused = stack.tether(bob, "write", lamp["did"], "Motor_Speed=0", "--timeout", "2", *lan, check=False)
        assert refused.returncode != 0, refused.stdout

        stack.tether(alice, "logout")
        assert stack.tether(alice, "whoami", check=False).returncode != 0
    finally:
        for process in [watch, agent, spare_agent]:
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=10)


def stack_url(stack):
    return f"http://127.0.0.1:{stack.http_port}"


def _write(path, value):
    with open(path, "w") as file:
        json.dump(value, file)
    return True


def test_session_renewed_then_expired(tmp_path):
    """Tokens that last 8 s: the SDK renews the session whenever it is used within its last day,
    so a user who keeps using the app stays logged in past the first token's end; one who comes
    back after it ended is told once, clearly, to log in again."""
    directory = str(tmp_path)
    port, mqtt_port = free_port(), free_port()
    cloud = subprocess.Popen(
        [os.path.join(CLOUD_BIN, "tether-cloud"), "serve", "--metrics-bind", "none", "--http-port", str(port), "--mqtt-port", str(mqtt_port),
         "--database", f"sqlite:{directory}/cloud.sqlite", "--log-level", "warning", "--token-lifetime", "8"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        app = json.loads(subprocess.run(
            [os.path.join(CLOUD_BIN, "tether-cloud"), "admin", "app", "create", "--name", "short", "--database", f"sqlite:{directory}/cloud.sqlite", "--json"],
            check=True, capture_output=True, text=True,
        ).stdout)
        home = os.path.join(directory, "carol")

        def tether(*arguments):
            return subprocess.run([os.path.join(BIN, "tether"), *arguments], capture_output=True, text=True, timeout=60,
                                  env={**os.environ, "TETHER_HOME": home})

        started = time.time()
        assert tether("register", "--cloud", f"http://127.0.0.1:{port}", "--app-id", app["appId"], "--discover", "none",
                      "--username", "carol", "--password", PASSWORD).returncode == 0
        session_file = os.path.join(home, f"session-{app['appId']}.json")
        first = json.load(open(session_file))
        # Used every few seconds, past the end of the first token: renewed each time.
        while time.time() - started < 12:
            result = tether("whoami")
            assert result.returncode == 0, result.stderr
            time.sleep(2)
        assert json.load(open(session_file))["token"] != first["token"]
        assert oct(os.stat(session_file).st_mode & 0o777) == "0o600"
        # Not used for longer than a token lasts: over, said clearly, and forgotten.
        time.sleep(9)
        result = tether("whoami")
        assert result.returncode != 0
        assert "notLoggedIn" in result.stderr and "log in again" in result.stderr, result.stderr
        assert not os.path.exists(session_file)
    finally:
        cloud.terminate()
        cloud.wait(timeout=10)


def test_agent_firmware_upgrades(stack):
    """OTA with every part a process: two simulated devices (`--firmware-version 1.0`), one whose
    download drops halfway (`--ota-fault interrupt`) and one whose package does not verify
    (`--ota-fault bad-checksum`); `tether firmware --upgrade --wait` follows each to its end."""
    app = stack.admin("app", "create", "--name", "ota")
    product = stack.admin("product", "create", "--name", "Lamp", "--tsl", os.path.join(ROOT, "products", "lamp-tsl.json"))
    steady = stack.admin("device", "create", "--product", product["productKey"], "--name", "steady")
    broken = stack.admin("device", "create", "--product", product["productKey"], "--name", "broken")
    with tempfile.NamedTemporaryFile(suffix=".bin") as package:
        package.write(os.urandom(300_000))
        package.flush()
        firmware = stack.admin("firmware", "add", "--product", product["productKey"], "--version", "2.0", "--file", package.name)
    agents = []
    for device, fault in ((steady, "interrupt"), (broken, "bad-checksum")):
        credentials = os.path.join(stack.directory, f"{device['deviceName']}.json")
        _write(credentials, [device])
        agents.append(subprocess.Popen(
            [os.path.join(BIN, "tether-agent"), "simulate", "--product", os.path.join(ROOT, "products", "lamp-tsl.json"), "--no-lan",
             "--interval", "0", "--cloud", f"127.0.0.1:{stack.mqtt_port}", "--credentials", credentials,
             "--firmware-version", "1.0", "--ota-fault", fault],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        bob = os.path.join(stack.directory, "bob")
        stack.tether(bob, "register", "--cloud", stack_url(stack), "--app-id", app["appId"], "--discover", "none", "--username", "bob", "--password", PASSWORD)
        for device in (steady, broken):
            stack.tether(bob, "bind", "--did", device["did"], "--passcode", device["passcode"])
        deadline = time.time() + 20
        while json.loads(stack.tether(bob, "firmware", steady["did"], "--json").stdout)["versions"] != {"default": "1.0"}:
            assert time.time() < deadline, "the agent did not report its version"
            time.sleep(0.2)

        upgraded = stack.tether(bob, "firmware", steady["did"], "--upgrade", str(firmware["id"]), "--wait", "--wait-timeout", "60", "--json")
        states = [json.loads(line) for line in upgraded.stdout.splitlines()]
        assert states[-1]["state"] == "applied" and any(s["progress"] == 90 for s in states), states
        assert json.loads(stack.tether(bob, "firmware", steady["did"], "--json").stdout)["versions"] == {"default": "2.0"}

        failed = stack.tether(bob, "firmware", broken["did"], "--upgrade", str(firmware["id"]), "--wait", "--wait-timeout", "60", "--json", check=False)
        assert failed.returncode != 0 and "failed" in failed.stderr, failed.stderr
        last = json.loads(failed.stdout.splitlines()[-1])
        assert last["state"] == "failed" and last["failure_step"] == -3, last
    finally:
        for agent in agents:
            agent.terminate()
            agent.wait(timeout=10)
