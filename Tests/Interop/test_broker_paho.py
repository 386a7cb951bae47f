"""Tether's broker against the real paho-mqtt client, in MQTT 3.1.1 and 5."""
import queue
import socket
import struct
import threading
import time
import uuid

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
import pytest

VERSIONS = [mqtt.MQTTv311, mqtt.MQTTv5]


class Client:
    """A paho client with its messages in a queue and connect/disconnect results recorded."""

    def __init__(self, broker, version, client_id=None, clean=True, will=None, keepalive=60, session_expiry=None):
        self.version = version
        self.client_id = client_id or f"t-{uuid.uuid4().hex[:10]}"
        kwargs = {"callback_api_version": mqtt.CallbackAPIVersion.VERSION2, "client_id": self.client_id, "protocol": version}
        if version != mqtt.MQTTv5:
            kwargs["clean_session"] = clean
        self.client = mqtt.Client(**kwargs)
        self.messages = queue.Queue()
        self.connected = threading.Event()
        self.disconnected = threading.Event()
        self.disconnect_reason = None
        self.connack = None
        self.client.on_message = lambda c, u, m: self.messages.put(m)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        if will:
            self.client.will_set(*will)
        properties = None
        if version == mqtt.MQTTv5:
            properties = Properties(PacketTypes.CONNECT)
            properties.SessionExpiryInterval = session_expiry if session_expiry is not None else (0 if clean else 3600)
        connect_kwargs = {"keepalive": keepalive}
        if version == mqtt.MQTTv5:
            connect_kwargs["clean_start"] = clean
            connect_kwargs["properties"] = properties
        self.client.connect(broker.host, broker.port, **connect_kwargs)
        self.client.loop_start()
        assert self.connected.wait(5), "no CONNACK"

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        self.connack = (flags, reason_code)
        self.connected.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self.disconnect_reason = reason_code
        self.disconnected.set()

    def subscribe(self, topic, qos=0, **options):
        done = threading.Event()
        granted = []
        self.client.on_subscribe = lambda c, u, mid, codes, p: (granted.extend(codes), done.set())
        if self.version == mqtt.MQTTv5 and options:
            self.client.subscribe(topic, options=mqtt.SubscribeOptions(qos=qos, **options))
        else:
            self.client.subscribe(topic, qos)
        assert done.wait(5), "no SUBACK"
        return granted

    def publish(self, topic, payload, qos=0, retain=False):
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(5)
        assert info.is_published()

    def get(self, timeout=3):
        return self.messages.get(timeout=timeout)

    def nothing(self, wait=0.5):
        try:
            message = self.messages.get(timeout=wait)
        except queue.Empty:
            return True
        raise AssertionError(f"unexpected message on {message.topic}: {message.payload!r}")

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()

    def drop(self):
        """Ends the TCP connection without DISCONNECT."""
        self.client.socket().shutdown(socket.SHUT_RDWR)
        self.client.loop_stop()


@pytest.mark.parametrize("version", VERSIONS)
def test_wildcards_and_qos(broker, version):
    sub = Client(broker, version)
    assert [int(getattr(c, "value", c)) for c in sub.subscribe("home/+/temp", 1)] == [1]
    sub.subscribe("office/#", 2)
    pub = Client(broker, version)
    pub.publish("home/kitchen/temp", b"21", qos=1)
    pub.publish("home/kitchen/humidity", b"40", qos=1)
    pub.publish("office", b"parent level", qos=2)
    pub.publish("office/a/b", b"deep", qos=2)
    received = {(m.topic, m.payload, m.qos) for m in [sub.get(), sub.get(), sub.get()]}
    assert received == {("home/kitchen/temp", b"21", 1), ("office", b"parent level", 2), ("office/a/b", b"deep", 2)}
    sub.nothing()
    pub.close()
    sub.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_dollar_topics_not_matched_by_leading_wildcards(broker, version):
    sub = Client(broker, version)
    sub.subscribe("#")
    sub.subscribe("$SYS/test")
    pub = Client(broker, version)
    pub.publish("$SYS/test", b"sys")
    message = sub.get()
    assert message.topic == "$SYS/test"
    sub.nothing()


@pytest.mark.parametrize("version", VERSIONS)
def test_retained(broker, version):
    pub = Client(broker, version)
    pub.publish("state/lamp", b"on", qos=1, retain=True)
    sub = Client(broker, version)
    sub.subscribe("state/#", 1)
    message = sub.get()
    assert (message.topic, message.payload, message.retain) == ("state/lamp", b"on", True)
    pub.publish("state/lamp", b"", qos=1, retain=True)  # clears it
    late = Client(broker, version)
    late.subscribe("state/#", 1)
    late.nothing()


@pytest.mark.parametrize("version", VERSIONS)
def test_will_on_lost_connection_not_on_disconnect(broker, version):
    watcher = Client(broker, version)
    watcher.subscribe("wills/#", 1)
    polite = Client(broker, version, will=("wills/polite", b"gone", 1, False))
    polite.close()
    watcher.nothing()
    rude = Client(broker, version, will=("wills/rude", b"lost", 1, False))
    rude.drop()
    message = watcher.get(5)
    assert (message.topic, message.payload) == ("wills/rude", b"lost")


@pytest.mark.parametrize("version", VERSIONS)
def test_qos2_exactly_once(broker, version):
    sub = Client(broker, version)
    sub.subscribe("exact/#", 2)
    pub = Client(broker, version)
    for index in range(50):
        pub.publish(f"exact/{index}", str(index).encode(), qos=2)
    payloads = [sub.get().payload for _ in range(50)]
    assert sorted(int(p) for p in payloads) == list(range(50))
    sub.nothing()


def test_qos2_resent_publish_is_delivered_once(broker):
    """A QoS 2 PUBLISH resent with DUP and the same packet id, before PUBREL, is not routed twice."""
    sub = Client(broker, mqtt.MQTTv311)
    sub.subscribe("dup/t", 2)
    raw = socket.create_connection((broker.host, broker.port))
    raw.sendall(bytes.fromhex("10 0f 00 04 4d 51 54 54 04 02 00 3c 00 03 72 61 77".replace(" ", "")))
    assert raw.recv(4) == bytes.fromhex("20020000")
    publish = bytes.fromhex("34 0a 00 05 64 75 70 2f 74 00 07 78".replace(" ", ""))
    raw.sendall(publish)
    assert raw.recv(4) == bytes.fromhex("50020007")  # PUBREC 7
    raw.sendall(bytes([0x3C]) + publish[1:])  # the same, DUP set
    assert raw.recv(4) == bytes.fromhex("50020007")
    raw.sendall(bytes.fromhex("62020007"))  # PUBREL
    assert raw.recv(4) == bytes.fromhex("70020007")  # PUBCOMP
    assert sub.get().payload == b"x"
    sub.nothing()
    raw.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_session_takeover(broker, version):
    first = Client(broker, version, client_id="same-id")
    second = Client(broker, version, client_id="same-id")
    first.client.reconnect_delay_set(60, 60)  # do not fight back for the id
    assert first.disconnected.wait(5), "the first connection was not closed"
    if version == mqtt.MQTTv5:
        assert int(first.disconnect_reason.value) == 0x8E  # session taken over
    second.subscribe("takeover", 0)
    other = Client(broker, version)
    other.publish("takeover", b"x")
    assert second.get().payload == b"x"


@pytest.mark.parametrize("version", VERSIONS)
def test_persistent_session_queues_and_resumes(broker, version):
    client_id = f"persistent-{version}"
    sub = Client(broker, version, client_id=client_id, clean=False)
    sub.subscribe("queued/#", 1)
    sub.close()
    pub = Client(broker, version)
    for index in range(5):
        pub.publish(f"queued/{index}", str(index).encode(), qos=1)
    again = Client(broker, version, client_id=client_id, clean=False)
    assert again.connack[0].session_present
    assert sorted(again.get().payload for _ in range(5)) == [b"0", b"1", b"2", b"3", b"4"]
    fresh = Client(broker, version, client_id=client_id, clean=True)
    assert not fresh.connack[0].session_present


def test_shared_subscriptions_share_the_load(broker):
    members = [Client(broker, mqtt.MQTTv5) for _ in range(2)]
    for member in members:
        member.subscribe("$share/workers/jobs/#", 1)
    pub = Client(broker, mqtt.MQTTv5)
    for index in range(20):
        pub.publish(f"jobs/{index}", str(index).encode(), qos=1)
    counts = []
    seen = []
    for member in members:
        got = []
        while True:
            try:
                got.append(member.get(1).payload)
            except queue.Empty:
                break
        counts.append(len(got))
        seen += got
    assert sorted(int(p) for p in seen) == list(range(20)), "every job delivered exactly once"
    assert all(count > 0 for count in counts), f"both members got work: {counts}"


def test_v5_no_local_and_subscription_identifier(broker):
    client = Client(broker, mqtt.MQTTv5)
    client.subscribe("echo/#", 1, noLocal=True)
    client.publish("echo/1", b"mine", qos=1)
    client.nothing()
    other = Client(broker, mqtt.MQTTv5)
    properties = Properties(PacketTypes.SUBSCRIBE)
    properties.SubscriptionIdentifier = 42
    done = threading.Event()
    other.client.on_subscribe = lambda *a: done.set()
    other.client.subscribe("ids/#", 1, properties=properties)
    assert done.wait(5)
    client.publish("ids/x", b"y", qos=1)
    message = other.get()
    assert message.properties.SubscriptionIdentifier == [42]


def test_keep_alive_timeout_closes_silent_client_and_sends_will(broker):
    watcher = Client(broker, mqtt.MQTTv311)
    watcher.subscribe("silent/will", 0)
    raw = socket.create_connection((broker.host, broker.port))
    # CONNECT, keep-alive 1 s, will "silent/will" = "z".
    body = b"\x00\x04MQTT\x04\x06\x00\x01" + b"\x00\x02kk" + b"\x00\x0bsilent/will" + b"\x00\x01z"
    raw.sendall(bytes([0x10, len(body)]) + body)
    assert raw.recv(4) == bytes.fromhex("20020000")
    started = time.time()
    raw.settimeout(5)
    assert raw.recv(1) == b"", "the broker closed the silent connection"
    elapsed = time.time() - started
    assert 1.0 <= elapsed < 4.0, f"closed after {elapsed:.1f} s, expected about 1.5 s"
    assert watcher.get(3).payload == b"z"


@pytest.mark.parametrize(
    "garbage",
    [
        bytes.fromhex("30 80 80 80 80 01"),  # 5-byte remaining length
        bytes.fromhex("36 05 00 01 61 00 01"),  # QoS 3
        bytes.fromhex("30 04 00 01 23 78"),  # wildcard in a topic name
        bytes.fromhex("82 02 00 01"),  # SUBSCRIBE without filters
        bytes.fromhex("10 0c 00 04 4d 51 54 54 04 02 00 3c 00 00"),  # a second CONNECT
        bytes(range(256)),
    ],
)
def test_malformed_packets_are_answered_by_disconnect_not_a_crash(broker, garbage):
    raw = socket.create_connection((broker.host, broker.port))
    raw.sendall(bytes.fromhex("10 0f 00 04 4d 51 54 54 04 02 00 3c 00 03 62 61 64".replace(" ", "")))
    assert raw.recv(4) == bytes.fromhex("20020000")
    raw.sendall(garbage)
    raw.settimeout(5)
    try:
        while raw.recv(1024):
            pass
    except ConnectionResetError:
        pass
    raw.close()
    assert broker.alive()
    healthy = Client(broker, mqtt.MQTTv311)
    healthy.close()


def test_v5_malformed_packet_gets_disconnect_with_reason(broker):
    raw = socket.create_connection((broker.host, broker.port))
    raw.sendall(bytes.fromhex("10 10 00 04 4d 51 54 54 05 02 00 3c 00 00 03 62 61 64".replace(" ", "")))
    connack = raw.recv(64)
    assert connack[0] == 0x20 and connack[3] == 0
    raw.sendall(bytes.fromhex("30 05 00 01 61 02 11"))  # session expiry is not allowed in PUBLISH
    raw.settimeout(5)
    answer = raw.recv(16)
    assert answer[0] == 0xE0 and answer[2] in (0x81, 0x82), answer.hex()


def test_unsupported_protocol_level_is_refused(broker):
    raw = socket.create_connection((broker.host, broker.port))
    raw.sendall(bytes.fromhex("10 0c 00 04 4d 51 54 54 07 02 00 3c 00 00".replace(" ", "")))
    assert raw.recv(4) == bytes.fromhex("20020001")


def test_publish_sent_before_connack_is_delivered_without_further_input(broker):
    # A client may publish right behind its CONNECT, before the CONNACK (MQTT 3.1.1 §3.1.4):
    # the broker holds the PUBLISH until the client is authenticated, then must route it at
    # once, not when the client happens to send something else.
    sub = Client(broker, mqtt.MQTTv311)
    sub.subscribe("early/#", qos=1)
    raw = socket.create_connection((broker.host, broker.port))
    connect = bytes.fromhex("10 11 00 04 4d 51 54 54 04 02 00 3c 00 05 65 61 72 6c 79".replace(" ", ""))
    publish = bytes.fromhex("32 0d 00 07 65 61 72 6c 79 2f 61 00 01 68 69".replace(" ", ""))  # QoS 1 "early/a" "hi"
    raw.sendall(connect + publish)
    raw.settimeout(5)
    answer = raw.recv(8)
    assert answer[:4] == bytes.fromhex("20020000"), answer.hex()
    message = sub.get(timeout=3)
    assert (message.topic, message.payload) == ("early/a", b"hi")
    raw.close()
    sub.close()


def test_v5_enhanced_authentication_method_is_refused(broker):
    # The broker supports no enhanced authentication (MQTT 5 §4.12): a CONNECT that names a
    # method gets CONNACK 0x8C and the connection is closed, instead of a silent acceptance.
    client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id="scram", protocol=mqtt.MQTTv5)
    answered = threading.Event()
    codes = []
    client.on_connect = lambda c, u, f, reason_code, p: (codes.append(reason_code), answered.set())
    properties = Properties(PacketTypes.CONNECT)
    properties.AuthenticationMethod = "SCRAM-SHA-1"
    properties.AuthenticationData = b"client-first-message"
    client.connect(broker.host, broker.port, properties=properties)
    client.loop_start()
    try:
        assert answered.wait(5), "no CONNACK"
        assert codes[0].value == 0x8C, codes
    finally:
        client.loop_stop()


def test_packet_above_maximum_size_is_refused(broker):
    client = Client(broker, mqtt.MQTTv5)
    client.client.publish("big", b"x" * 70_000)
    assert client.disconnected.wait(5)


def test_mosquitto_clients(broker):
    import subprocess
    sub = subprocess.Popen(
        ["mosquitto_sub", "-h", broker.host, "-p", str(broker.port), "-t", "cli/#", "-C", "2", "-q", "1", "-v"],
        stdout=subprocess.PIPE, text=True,
    )
    time.sleep(0.5)
    subprocess.run(["mosquitto_pub", "-h", broker.host, "-p", str(broker.port), "-t", "cli/a", "-m", "one", "-q", "1"], check=True)
    subprocess.run(["mosquitto_pub", "-h", broker.host, "-p", str(broker.port), "-t", "cli/b", "-m", "two", "-q", "2", "-V", "mqttv5"], check=True)
    out, _ = sub.communicate(timeout=10)
    assert out.splitlines() == ["cli/a one", "cli/b two"]


@pytest.mark.parametrize("version", VERSIONS)
def test_paho_over_websocket(ws_broker, version):
    kwargs = {"callback_api_version": mqtt.CallbackAPIVersion.VERSION2, "protocol": version, "transport": "websockets"}
    received = queue.Queue()
    client = mqtt.Client(**kwargs)
    client.ws_set_options(path="/mqtt")
    connected = threading.Event()
    subscribed = threading.Event()
    client.on_connect = lambda *a: connected.set()
    client.on_subscribe = lambda *a: subscribed.set()
    client.on_message = lambda c, u, m: received.put(m)
    client.connect("127.0.0.1", ws_broker.ws_port)
    client.loop_start()
    assert connected.wait(5), "no CONNACK over WebSocket"
    client.subscribe("ws/#", 1)
    assert subscribed.wait(5)
    client.publish("ws/paho", b"over websocket", qos=1).wait_for_publish(5)
    message = received.get(timeout=5)
    assert (message.topic, message.payload) == ("ws/paho", b"over websocket")
    client.disconnect()
    client.loop_stop()
