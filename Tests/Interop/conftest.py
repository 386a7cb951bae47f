"""Starts the project's own servers on free loopback ports: the MQTT broker (`tether mqtt broker`)
and the cloud (`tether-cloud serve`, with a SQLite database in a temporary directory)."""
import os
import socket
import json
import subprocess
import tempfile
import time
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("TETHER_BIN_DIR", os.path.join(ROOT, ".build", "debug"))
CLOUD_BIN = os.environ.get("TETHER_CLOUD_BIN_DIR", os.path.join(ROOT, "Cloud", ".build", "debug"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


class Broker:
    def __init__(self, port, process):
        self.host = "127.0.0.1"
        self.port = port
        self.process = process

    def alive(self):
        return self.process.poll() is None


@pytest.fixture
def ws_broker():
    port, ws_port = free_port(), free_port()
    process = subprocess.Popen(
        [os.path.join(BIN, "tether"), "mqtt", "broker", "--bind", "127.0.0.1", "--port", str(port), "--websocket-port", str(ws_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(ws_port)
        broker = Broker(port, process)
        broker.ws_port = ws_port
        yield broker
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def broker():
    port = free_port()
    process = subprocess.Popen(
        [os.path.join(BIN, "tether"), "mqtt", "broker", "--bind", "127.0.0.1", "--port", str(port), "--max-packet-size", "65536"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield Broker(port, process)
        assert process.poll() is None, "the broker died during the test"
    finally:
        process.terminate()
        process.wait(timeout=10)


class Cloud:
    def __init__(self, directory, port, process, mqtt_port):
        self.directory = directory
        self.port = port
        self.mqtt_port = mqtt_port
        self.process = process
        self.base_url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}/ws/app/v1"

    def admin(self, *arguments):
        output = subprocess.run(
            [os.path.join(CLOUD_BIN, "tether-cloud"), "admin", *arguments, "--database", f"sqlite:{self.directory}/cloud.sqlite", "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        return json.loads(output)

    def request(self, method, path, body=None, headers=None, form=False):
        data = None
        headers = dict(headers or {})
        if body is not None:
            if form:
                data = "&".join(f"{k}={v}" for k, v in body.items()).encode()
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            else:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read().decode()


@pytest.fixture
def cloud():
    with tempfile.TemporaryDirectory() as directory:
        port, mqtt_port = free_port(), free_port()
        process = subprocess.Popen(
            [os.path.join(CLOUD_BIN, "tether-cloud"), "serve", "--metrics-bind", "none", "--http-port", str(port), "--mqtt-port", str(mqtt_port),
             "--database", f"sqlite:{directory}/cloud.sqlite", "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port)
            wait_for_port(mqtt_port)
            yield Cloud(directory, port, process, mqtt_port)
        finally:
            process.terminate()
            assert process.wait(timeout=10) == 0, "tether-cloud did not stop cleanly on SIGTERM"
