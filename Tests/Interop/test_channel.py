"""The IoT channel (`tether channel …`, TetherChannel in the SDK) against brokers that are not
ours, and against the Tether cloud's gateway: mosquitto with a paho-based server answering
`_reply`, as an app's own backend would, and the gateway answering a property post."""
import json
import os
import subprocess
import tempfile
import threading
import time

import paho.mqtt.client as paho
import pytest

from conftest import BIN, ROOT, free_port, wait_for_port

PK, DN, DS = "a1PK000003", "phone-7", "s3cr3t-channel"
BASE = f"/sys/{PK}/{DN}"


@pytest.fixture
def mosquitto():
    with tempfile.TemporaryDirectory() as directory:
        port = free_port()
        config = os.path.join(directory, "mosquitto.conf")
        with open(config, "w") as f:
            f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        process = subprocess.Popen(["mosquitto", "-c", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port)
            yield port
        finally:
            process.terminate()
            process.wait(timeout=10)


def paho_client(port, name):
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=name)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


@pytest.fixture
def responder(mosquitto):
    """Answers requests under BASE/app/ on `topic_reply`: the params back as data, code 6813
    when params ask for a refusal; the envelope is checked as it arrives."""
    seen = []
    subscribed = threading.Event()
    client = paho_client(mosquitto, "app-backend")

    def on_message(client, userdata, message):
        if message.topic.endswith("_reply"):
            return
        request = json.loads(message.payload)
        seen.append(request)
        assert request["system"]["version"] == "1.0" and int(request["system"]["time"]) > 0
        code = 6813 if request["params"].get("refuse") else 200
        reply = {"id": request["id"], "code": code, "data": request["params"], "message": "refused" if code != 200 else "success"}
        client.publish(message.topic + "_reply", json.dumps(reply), qos=1)

    client.on_message = on_message
    client.on_subscribe = lambda *args: subscribed.set()
    client.subscribe(f"{BASE}/app/#", qos=1)
    assert subscribed.wait(5)
    yield seen
    client.loop_stop()
    client.disconnect()


def channel(*arguments, port, timeout=30):
    command = [os.path.join(BIN, "tether"), "channel", *arguments[:1], "--host", "127.0.0.1", "--port", str(port),
               "--product-key", PK, "--device-name", DN, "--device-secret", DS, *arguments[1:]]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def test_invoke_against_mosquitto_and_a_paho_backend(mosquitto, responder):
    done = channel("invoke", "--topic", f"{BASE}/app/echo", "--params", '{"n":1,"s":"x"}', "--extra", '{"method":"app.echo"}', "--json", port=mosquitto)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["code"] == 200
    assert reply["data"] == {"n": 1, "s": "x"}
    assert reply["id"] == responder[-1]["id"]
    assert responder[-1]["method"] == "app.echo"
    assert responder[-1]["request"] == {}

    refused = channel("invoke", "--topic", f"{BASE}/app/echo", "--params", '{"refuse":true}', "--json", port=mosquitto)
    assert refused.returncode != 0
    assert refused.stdout == ""
    assert "cloudRefused" in refused.stderr and "6813" in refused.stderr

    # Nobody answers outside BASE/app/.
    unanswered = channel("invoke", "--topic", f"{BASE}/nobody/home", "--params", "{}", "--timeout", "0.5", "--json", port=mosquitto)
    assert unanswered.returncode != 0
    assert "timeout" in unanswered.stderr


def test_subscribe_against_mosquitto_prints_what_arrives(mosquitto):
    process = subprocess.Popen(
        [os.path.join(BIN, "tether"), "channel", "subscribe", "--host", "127.0.0.1", "--port", str(mosquitto),
         "--product-key", PK, "--device-name", DN, "--device-secret", DS, "--topic", f"{BASE}/down/#", "--count", "2", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert "subscribed to" in process.stderr.readline()
        publisher = paho_client(mosquitto, "pusher")
        publisher.publish(f"{BASE}/down/event", json.dumps({"id": "9", "params": {"on": True}}), qos=1).wait_for_publish(5)
        publisher.publish(f"{BASE}/down/raw", b"plain text", qos=1).wait_for_publish(5)
        out, _ = process.communicate(timeout=20)
        publisher.loop_stop()
        lines = [json.loads(line) for line in out.splitlines()]
        assert lines == [
            {"topic": f"{BASE}/down/event", "payload": {"id": "9", "params": {"on": True}}},
            {"topic": f"{BASE}/down/raw", "payload": "plain text"},
        ]
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()


def test_invoke_against_the_tether_gateway(cloud):
    product = cloud.admin("product", "create", "--name", "Lamp", "--tsl", os.path.join(ROOT, "products", "lamp-tsl.json"))
    identity = cloud.admin("device", "create", "--product", product["productKey"], "--name", "phone-9")
    pk, dn = identity["productKey"], identity["deviceName"]
    command = [os.path.join(BIN, "tether"), "channel", "invoke", "--host", "127.0.0.1", "--port", str(cloud.mqtt_port),
               "--product-key", pk, "--device-name", dn, "--device-secret", identity["deviceSecret"],
               "--topic", f"/sys/{pk}/{dn}/thing/event/property/post", "--params", '{"LightSwitch":1}',
               "--extra", '{"method":"thing.event.property.post"}', "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["code"] == 200

    # A value the product's model refuses: the gateway's code comes back as a typed error.
    command[command.index("--params") + 1] = '{"Brightness":1000}'
    refused = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0
    assert "cloudRefused" in refused.stderr

    # Another device's topic: the gateway does not let the request out, so no reply comes.
    command[command.index("--topic") + 1] = f"/sys/{pk}/someone-else/thing/event/property/post"
    command += ["--timeout", "1"]
    stranger = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert stranger.returncode != 0


def test_account_bind_with_an_iot_token_from_the_cli(cloud):
    """The seed's example: the phone, connected as a device, binds itself to the logged-in user
    with `/sys/{pk}/{dn}/account/bind` and an iotToken (`tether iot-token`)."""
    app = cloud.admin("app", "create", "--name", "channel-app")
    product = cloud.admin("product", "create", "--name", "Phone", "--tsl", os.path.join(ROOT, "products", "lamp-tsl.json"))
    identity = cloud.admin("device", "create", "--product", product["productKey"], "--name", "phone-10")
    pk, dn = identity["productKey"], identity["deviceName"]
    home = os.path.join(cloud.directory, "owner")

    def tether(*arguments):
        return subprocess.run([os.path.join(BIN, "tether"), *arguments], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "TETHER_HOME": home})

    registered = tether("register", "--cloud", cloud.base_url, "--app-id", app["appId"], "--discover", "none",
                        "--username", "phoneowner", "--password", "Passw0rd!")
    assert registered.returncode == 0, registered.stderr
    token = tether("iot-token")
    assert token.returncode == 0, token.stderr
    invoke = ["channel", "invoke", "--host", "127.0.0.1", "--port", str(cloud.mqtt_port), "--product-key", pk, "--device-name", dn,
              "--device-secret", identity["deviceSecret"], "--topic", f"/sys/{pk}/{dn}/account/bind",
              "--params", json.dumps({"iotToken": token.stdout.strip()}), "--timeout", "5", "--json"]
    bound = tether(*invoke)
    assert bound.returncode == 0, bound.stderr
    assert json.loads(bound.stdout)["code"] == 200
    devices = tether("devices", "--json")
    assert devices.returncode == 0, devices.stderr
    assert [device["did"] for device in json.loads(devices.stdout)] == [identity["did"]]
    # The token was used: a second binding with it is refused with the gateway's code.
    again = tether(*invoke)
    assert again.returncode != 0 and "cloudRefused" in again.stderr and "401" in again.stderr, again.stderr
