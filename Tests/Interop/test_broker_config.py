"""`tether mqtt broker -c FILE` against real peers: password files written by mosquitto_passwd,
paho-mqtt and mosquitto_pub/mosquitto_sub clients, an ACL with %u/%c patterns, reloads on SIGHUP,
persistence across a restart, TLS and WebSocket listeners."""
import os
import signal
import subprocess
import time
import uuid

import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes
import pytest

from conftest import BIN, ROOT, free_port, wait_for_port

TLS = os.path.join(ROOT, "Tests", "Fixtures", "tls")


class ConfiguredBroker:
    def __init__(self, directory, config):
        self.directory = directory
        self.port = free_port()
        self.config_path = os.path.join(directory, "broker.conf")
        with open(self.config_path, "w") as f:
            f.write(config.replace("$PORT", str(self.port)))
        self.process = None

    def start(self):
        self.log = open(os.path.join(self.directory, "broker.log"), "a")
        self.process = subprocess.Popen([os.path.join(BIN, "tether"), "mqtt", "broker", "-c", self.config_path],
                                        stdout=self.log, stderr=self.log)
        wait_for_port(self.port)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            assert self.process.wait(timeout=10) == 0, "the broker did not stop cleanly on SIGTERM"
        self.log.close()

    def reload(self):
        self.process.send_signal(signal.SIGHUP)
        time.sleep(0.5)

    def path(self, name):
        return os.path.join(self.directory, name)


@pytest.fixture
def make_broker(tmp_path):
    brokers = []

    def make(config, files=None):
        for name, text in (files or {}).items():
            with open(tmp_path / name, "w") as f:
                f.write(text)
        broker = ConfiguredBroker(str(tmp_path), config)
        broker.start()
        brokers.append(broker)
        return broker

    yield make
    for broker in brokers:
        broker.stop()


def passwd(broker, *arguments):
    subprocess.run(["mosquitto_passwd", *arguments], check=True, cwd=broker.directory if broker else None)


def connect(port, username=None, password=None, version=mqtt.MQTTv5, client_id=None):
    """Connects and returns (client, reason code), the client running its loop."""
    client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or f"t-{uuid.uuid4().hex[:8]}", protocol=version)
    if username is not None:
        client.username_pw_set(username, password)
    result = {}
    client.on_connect = lambda c, u, flags, rc, p: result.setdefault("rc", rc)
    client.on_disconnect = lambda c, u, flags, rc, p: result.setdefault("rc", rc)
    client.connect("127.0.0.1", port)
    client.loop_start()
    deadline = time.time() + 5
    while "rc" not in result and time.time() < deadline:
        time.sleep(0.02)
    assert "rc" in result, "no CONNACK"
    return client, result["rc"]


def rc_value(rc):
    return rc.value if hasattr(rc, "value") else rc


def test_passwords_from_mosquitto_passwd(make_broker, tmp_path):
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(tmp_path / "passwords"), "alice", "alice-pw"], check=True)
    subprocess.run(["mosquitto_passwd", "-H", "sha512", "-b", str(tmp_path / "passwords"), "bob", "bob-pw"], check=True)
    broker = make_broker("listener $PORT 127.0.0.1\nallow_anonymous false\npassword_file passwords\n")
    # paho reports a 3.1.1 return code as the MQTT 5 reason code of the same meaning.
    for version, refused, not_authorized in [(mqtt.MQTTv5, 134, 135), (mqtt.MQTTv311, 134, 135)]:
        for user, password in [("alice", "alice-pw"), ("bob", "bob-pw")]:
            client, rc = connect(broker.port, user, password, version)
            assert rc_value(rc) == 0, (user, rc)
            client.disconnect()
        for user, password in [("alice", "bob-pw"), ("mallory", "alice-pw")]:
            client, rc = connect(broker.port, user, password, version)
            assert rc_value(rc) == refused, (user, rc)
            client.loop_stop()
        client, rc = connect(broker.port, version=version)
        assert rc_value(rc) == not_authorized, "anonymous"
        client.loop_stop()
    # mosquitto's own client with the same credentials.
    pub = subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-u", "alice", "-P", "alice-pw", "-t", "x", "-m", "hi"],
                         capture_output=True, text=True, timeout=10)
    assert pub.returncode == 0, pub.stderr
    bad = subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-u", "alice", "-P", "nope", "-t", "x", "-m", "hi"],
                         capture_output=True, text=True, timeout=10)
    assert bad.returncode != 0


ACL = """topic read public/#
user alice
topic readwrite home/alice/#
user bob
topic read home/alice/#
pattern write clients/%c/#
pattern readwrite users/%u/#
"""


def subscribe(client, topic):
    granted = []
    done = []
    client.on_subscribe = lambda c, u, mid, codes, p: (granted.extend(codes), done.append(1))
    client.subscribe(topic, 1)
    deadline = time.time() + 5
    while not done and time.time() < deadline:
        time.sleep(0.02)
    assert done, "no SUBACK"
    return [rc_value(code) for code in granted]


def test_acl_with_user_and_pattern_rules(make_broker, tmp_path):
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(tmp_path / "passwords"), "alice", "alice-pw"], check=True)
    subprocess.run(["mosquitto_passwd", "-b", str(tmp_path / "passwords"), "bob", "bob-pw"], check=True)
    broker = make_broker("listener $PORT 127.0.0.1\nallow_anonymous true\npassword_file passwords\nacl_file acl\n", {"acl": ACL})
    bob, rc = connect(broker.port, "bob", "bob-pw", client_id="bob-phone")
    received = []
    bob.on_message = lambda c, u, m: received.append(m.topic)
    assert subscribe(bob, "home/alice/#") == [1]
    assert subscribe(bob, "users/bob/#") == [1]
    assert subscribe(bob, "home/bob/#") == [135], "bob has no rule there"
    alice, _ = connect(broker.port, "alice", "alice-pw", client_id="alice-phone")
    for topic in ["home/alice/lamp", "users/alice/note", "clients/alice-phone/up", "clients/bob-phone/up", "public/news", "users/bob/forged"]:
        info = alice.publish(topic, b"x", qos=1)
        info.wait_for_publish(5)
    alice.publish("home/alice/lamp", b"x", qos=1).wait_for_publish(5)
    time.sleep(1)
    # Alice may write home/alice (twice) and her own clients/%c; users/bob is not hers.
    assert received == ["home/alice/lamp", "home/alice/lamp"], received
    # Anonymous clients read public/ only, and write nothing.
    guest, rc = connect(broker.port)
    assert rc_value(rc) == 0
    assert subscribe(guest, "public/#") == [1]
    assert subscribe(guest, "home/#") == [135]
    for client in (alice, bob, guest):
        client.disconnect()
        client.loop_stop()


def test_sighup_reloads_passwords_and_acl(make_broker, tmp_path):
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(tmp_path / "passwords"), "alice", "alice-pw"], check=True)
    broker = make_broker("listener $PORT 127.0.0.1\nallow_anonymous false\npassword_file passwords\nacl_file acl\n",
                         {"acl": "user alice\ntopic readwrite a/#\n"})
    # A user added with Tether's own passwd command, read on SIGHUP.
    subprocess.run([os.path.join(BIN, "tether"), "mqtt", "passwd", str(tmp_path / "passwords"), "carol", "--password", "carol-pw"], check=True)
    client, rc = connect(broker.port, "carol", "carol-pw")
    assert rc_value(rc) == 134, "not before the reload"
    client.loop_stop()
    with open(tmp_path / "acl", "a") as f:
        f.write("user carol\ntopic readwrite c/#\n")
    broker.reload()
    carol, rc = connect(broker.port, "carol", "carol-pw")
    assert rc_value(rc) == 0
    assert subscribe(carol, "c/#") == [1]
    # A user removed with mosquitto_passwd -D is refused after the next reload.
    subprocess.run(["mosquitto_passwd", "-D", str(tmp_path / "passwords"), "alice"], check=True)
    broker.reload()
    client, rc = connect(broker.port, "alice", "alice-pw")
    assert rc_value(rc) == 134
    client.loop_stop()
    # A broken file is not taken: the rules before it stay.
    with open(tmp_path / "acl", "w") as f:
        f.write("topic\n")
    broker.reload()
    again, rc = connect(broker.port, "carol", "carol-pw")
    assert rc_value(rc) == 0
    assert subscribe(again, "c/#") == [1]
    assert broker.process.poll() is None
    for client in (carol, again):
        client.disconnect()
        client.loop_stop()


def test_persistence_across_a_restart(make_broker, tmp_path):
    broker = make_broker("listener $PORT 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location .\n")
    # A persistent session subscribes, then goes away.
    keeper = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="keeper", protocol=mqtt.MQTTv311, clean_session=False)
    keeper.connect("127.0.0.1", broker.port)
    keeper.loop_start()
    time.sleep(0.3)
    assert subscribe(keeper, "kept/#") == [1]
    keeper.disconnect()
    keeper.loop_stop()
    publisher, _ = connect(broker.port, version=mqtt.MQTTv311)
    publisher.publish("kept/1", b"queued", qos=1).wait_for_publish(5)
    publisher.publish("state/lamp", b"on", qos=1, retain=True).wait_for_publish(5)
    publisher.disconnect()
    publisher.loop_stop()
    broker.stop()
    assert os.path.exists(tmp_path / "tether-broker.db")
    broker.start()
    received = []
    keeper = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="keeper", protocol=mqtt.MQTTv311, clean_session=False)
    keeper.on_message = lambda c, u, m: received.append((m.topic, m.payload))
    keeper.connect("127.0.0.1", broker.port)
    keeper.loop_start()
    late, _ = connect(broker.port, version=mqtt.MQTTv311)
    retained = []
    late.on_message = lambda c, u, m: retained.append((m.topic, m.payload, m.retain))
    assert subscribe(late, "state/#") == [1]
    deadline = time.time() + 5
    while (not received or not retained) and time.time() < deadline:
        time.sleep(0.05)
    assert received == [("kept/1", b"queued")]
    assert retained == [("state/lamp", b"on", True)]
    for client in (keeper, late):
        client.disconnect()
        client.loop_stop()


def test_tls_and_websocket_listeners(make_broker):
    tls_port, ws_port = free_port(), free_port()
    config = (f"listener $PORT 127.0.0.1\nlistener {tls_port} 127.0.0.1\ncertfile {TLS}/server.pem\nkeyfile {TLS}/server.key\n"
              f"listener {ws_port} 127.0.0.1\nprotocol websockets\nallow_anonymous true\n")
    broker = make_broker(config)
    wait_for_port(tls_port)
    wait_for_port(ws_port)
    subscriber = subprocess.Popen(["mosquitto_sub", "-h", "localhost", "-p", str(tls_port), "--cafile", f"{TLS}/ca.pem", "-t", "tls/#", "-C", "1", "-W", "10"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    web = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="ws", protocol=mqtt.MQTTv5, transport="websockets")
    web.ws_set_options(path="/mqtt")
    web.connect("127.0.0.1", ws_port)
    web.loop_start()
    time.sleep(0.5)
    web.publish("tls/hello", b"over websocket, read over TLS", qos=1).wait_for_publish(5)
    out, err = subscriber.communicate(timeout=15)
    assert out.strip() == "over websocket, read over TLS", err
    web.disconnect()
    web.loop_stop()
    # A client that does not trust the certificate is refused by its own TLS check.
    untrusted = subprocess.run(["mosquitto_pub", "-h", "localhost", "-p", str(tls_port), "--cafile", f"{TLS}/other-ca.pem", "-t", "x", "-m", "y"],
                               capture_output=True, text=True, timeout=10)
    assert untrusted.returncode != 0


def listening_addresses(port):
    """Local addresses of listening TCP sockets on `port`, from the kernel's table."""
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(":")
                if int(hex_port, 16) == port and fields[3] == "0A":
                    addresses.append(address)
    return addresses


def test_without_a_configuration_the_broker_listens_on_loopback_only():
    port = free_port()
    process = subprocess.Popen([os.path.join(BIN, "tether"), "mqtt", "broker", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        assert listening_addresses(port) == ["0100007F"], "127.0.0.1 only"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_configuration_mistake_stops_the_broker_with_its_line(tmp_path):
    config = tmp_path / "broker.conf"
    config.write_text("listener 1883\nallow_anonymous maybe\n")
    run = subprocess.run([os.path.join(BIN, "tether"), "mqtt", "broker", "-c", str(config)], capture_output=True, text=True, timeout=20)
    assert run.returncode != 0
    assert "broker.conf:2:" in run.stderr, run.stderr
