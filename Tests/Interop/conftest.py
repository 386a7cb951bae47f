"""Starts the project's own MQTT broker (`tether mqtt broker`) on a free loopback port."""
import os
import socket
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("TETHER_BIN_DIR", os.path.join(ROOT, ".build", "debug"))


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
