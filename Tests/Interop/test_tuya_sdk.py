"""The SDK's Tuya devices (the same `Device` as every other device, through `tether tuya watch`)
against tuyamock: the status and the device's pushes on every version, reconnection after the mock
goes dark, and the one-connection limit held without fighting another client."""
import json
import os
import queue
import subprocess
import threading
import time

import pytest
import tuyamock

from conftest import BIN
from test_tuya import DEVICE_ID, KEY, VERSIONS, tuya, where


class Watch:
    """`tether tuya watch --json` as a process, its lines read as they come."""

    def __init__(self, mock, version, *extra):
        self.process = subprocess.Popen(
            [os.path.join(BIN, "tether"), "tuya", "watch", *where(mock, version), "--local-key", KEY, "--json", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def next(self, accept=lambda line: True, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "no matching line from tether tuya watch"
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if accept(line):
                return line

    def drain(self):
        seen = []
        while not self.lines.empty():
            seen.append(self.lines.get())
        return seen

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        return self.process.stderr.read()


@pytest.mark.parametrize("version", VERSIONS)
def test_status_and_pushes(version):
    with tuyamock.MockDevice(local_key=KEY, version=version, dps={"1": True, "2": 50}, port=0) as mock:
        watch = Watch(mock, version)
        try:
            assert watch.next(lambda line: "dps" in line) == {"dps": {"1": True, "2": 50}}
            mock.push({"1": False})
            assert watch.next(lambda line: "dps" in line) == {"dps": {"1": False}}
            mock.push({"2": 75})
            assert watch.next(lambda line: "dps" in line) == {"dps": {"2": 75}}
        finally:
            watch.stop()


@pytest.mark.parametrize("version", ["3.3", "3.5"])
def test_reconnects_after_the_device_goes_dark(version):
    # The mock stops answering after its third answer, once; the SDK's heartbeat goes unanswered,
    # it closes the link, and the next connection is answered again.
    with tuyamock.MockDevice(local_key=KEY, version=version, dps={"1": True}, port=0, go_dark_after=3, outages=1) as mock:
        watch = Watch(mock, version, "--heartbeat", "0.3", "--timeout", "1")
        try:
            assert watch.next(lambda line: line == {"netStatus": "controllable"})
            assert watch.next(lambda line: "dps" in line) == {"dps": {"1": True}}
            assert watch.next(lambda line: line == {"netStatus": "online"}, timeout=15)
            assert watch.next(lambda line: line == {"netStatus": "controllable"}, timeout=15)
            assert watch.next(lambda line: "dps" in line) == {"dps": {"1": True}}
            # Control works on the new connection: a push is heard.
            mock.push({"1": False})
            assert watch.next(lambda line: "dps" in line) == {"dps": {"1": False}}
        finally:
            stderr = watch.stop()
        assert "HEART_BEAT" in stderr, stderr


def test_one_connection_at_a_time():
    # tuyamock, like many devices, serves the newest client and drops the one before. The SDK
    # lets another app have the device: it comes back only after a delay, so that the other
    # app's exchanges are not cut, and backs off further each time it is displaced.
    with tuyamock.MockDevice(local_key=KEY, version="3.4", dps={"1": True}, port=0) as mock:
        watch = Watch(mock, "3.4", "--heartbeat", "0.5")
        try:
            assert watch.next(lambda line: "dps" in line) == {"dps": {"1": True}}
            for value in ["false", "true", "false", "true", "false"]:
                answered = json.loads(tuya("set", *where(mock, "3.4"), f"1={value}", "--json", "--timeout", "2").stdout)
                assert answered["dps"]["1"] is (value == "true")
            # The SDK was displaced, then returned and reads the state the other app left. On a
            # loaded machine it may come back between two of the sets (its delay ran out while
            # the next CLI process started) and be displaced again, reporting a state in between:
            # what counts is that it ends with the last one.
            assert watch.next(lambda line: line == {"netStatus": "online"})
            assert watch.next(lambda line: line == {"netStatus": "controllable"}, timeout=20)
            assert watch.next(lambda line: line == {"dps": {"1": False}}, timeout=30)
            # The push is heard, or, if a later set displaced the SDK again, read when it returns
            # after its (longer) delay.
            mock.push({"1": True})
            assert watch.next(lambda line: line == {"dps": {"1": True}}, timeout=30)
        finally:
            watch.stop()
