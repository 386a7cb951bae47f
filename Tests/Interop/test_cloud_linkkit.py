"""The real Aliyun device SDK (PyPI aliyun-iot-linkkit) against the cloud's gateway on loopback,
with no TLS, and an app on the WebSocket M2M API (aiohttp) watching the device: the device
connects with its own signature, posts properties, receives a property set it never subscribed
to, answers a service call and posts an event, and the app sees each change, with the res_sn
of its write."""
import asyncio
import base64
import contextlib
import json
import os
import subprocess
import tempfile
import threading
import time

import aiohttp
import paho.mqtt.client as paho

from conftest import BIN, CLOUD_BIN, ROOT, Cloud, free_port, wait_for_port

# linkkit 1.2.13 calls paho's loop() with an argument paho 2 removed (alink-mqtt.md §6.1).
if "max_packets" not in paho.Client.loop.__code__.co_varnames:
    _loop = paho.Client.loop
    paho.Client.loop = lambda self, timeout=1.0, max_packets=1: _loop(self, timeout)

from linkkit import linkkit  # noqa: E402

LAMP_TSL = os.path.join(ROOT, "products", "lamp-tsl.json")


class Device:
    """A linkkit device whose callbacks land in thread-safe queues."""

    def __init__(self, cloud, identity):
        self.events = {name: threading.Event() for name in ("connected", "disconnected", "posted", "changed", "service", "event")}
        self.post_codes, self.changes, self.calls, self.event_codes = [], [], [], []
        self.lk = linkkit.LinkKit(
            host_name="127.0.0.1", product_key=identity["productKey"],
            device_name=identity["deviceName"], device_secret=identity["deviceSecret"],
        )
        self.lk.config_mqtt(port=cloud.mqtt_port, secure="", keep_alive=60)
        self.lk.thing_setup(LAMP_TSL)
        self.lk.on_connect = lambda session_flag, rc, userdata: (rc == 0) and self.events["connected"].set()
        self.lk.on_disconnect = lambda rc, userdata: self.events["disconnected"].set()
        self.lk.on_thing_prop_post = self._posted
        self.lk.on_thing_prop_changed = self._changed
        self.lk.on_thing_call_service = self._service
        self.lk.on_thing_event_post = self._event_posted

    def _posted(self, request_id, code, data, message, userdata):
        self.post_codes.append(code)
        self.events["posted"].set()

    def _changed(self, params, userdata):
        # The SDK has already answered set_reply; the device applies and reports the values.
        self.changes.append(params)
        self.lk.thing_post_property(params)
        self.events["changed"].set()

    def _service(self, identifier, request_id, params, userdata):
        self.calls.append((identifier, params))
        self.lk.thing_answer_service(identifier, request_id, 200, {"ok": 1})
        self.events["service"].set()

    def _event_posted(self, event, request_id, code, data, message, userdata):
        self.event_codes.append((event, code))
        self.events["event"].set()

    def wait(self, name, timeout=10):
        assert self.events[name].wait(timeout), f"linkkit: no {name} within {timeout} s"
        self.events[name].clear()


async def next_frame(ws, cmd, predicate=lambda frame: True, timeout=10):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        assert remaining > 0, f"app: no {cmd} frame within {timeout} s"
        message = await ws.receive(timeout=remaining)
        assert message.type == aiohttp.WSMsgType.TEXT, message
        frame = json.loads(message.data)
        if frame.get("cmd") == cmd and predicate(frame):
            return frame


def bound_lamp(cloud, app_name, device_name, username):
    """An app, a lamp device of a new product, and a new user bound to it over the REST API:
    (app, device identity, session, the user's request headers)."""
    app = cloud.admin("app", "create", "--name", app_name)
    product = cloud.admin("product", "create", "--name", "Lamp", "--tsl", LAMP_TSL)
    identity = cloud.admin("device", "create", "--product", product["productKey"], "--name", device_name)
    headers = {"X-Gizwits-Application-Id": app["appId"]}
    session = json.loads(cloud.request("POST", "/app/users", {"username": username, "password": "Passw0rd!"}, headers))
    user_headers = {**headers, "X-Gizwits-User-token": session["token"]}
    bound = json.loads(cloud.request("POST", "/app/bindings", {"devices": [{"did": identity["did"], "passcode": identity["passcode"]}]}, user_headers))
    assert bound["success"] == [identity["did"]]
    return app, identity, session, user_headers


def test_linkkit_device_and_websocket_app(cloud):
    app, identity, session, user_headers = bound_lamp(cloud, "linkkit", "dev01", "lampuser")
    did = identity["did"]
    device = Device(cloud, identity)

    async def scenario():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(cloud.ws_url) as ws:
                await ws.send_json({"cmd": "login_req", "data": {
                    "appid": app["appId"], "uid": session["uid"], "token": session["token"],
                    "p0_type": "attrs_v4", "heartbeat_interval": 180, "auto_subscribe": False}})
                assert (await next_frame(ws, "login_res"))["data"]["success"] is True
                await ws.send_json({"cmd": "subscribe_req", "data": [{"did": did}]})
                subscribed = await next_frame(ws, "subscribe_res")
                assert subscribed["data"]["success"][0]["did"] == did
                await next_frame(ws, "s2c_online_status", lambda f: f["data"]["online"] is False)

                device.lk.connect_async()
                await asyncio.to_thread(device.wait, "connected")
                await next_frame(ws, "s2c_online_status", lambda f: f["data"]["online"] is True)

                # Properties up: stored, answered with 200, pushed to the app.
                rc, _ = device.lk.thing_post_property({"LightSwitch": 1, "Brightness": 40})
                assert rc == 0
                await asyncio.to_thread(device.wait, "posted")
                assert device.post_codes == [200]
                noti = await next_frame(ws, "s2c_noti", lambda f: "res_sn" not in f)
                assert noti["data"] == {"did": did, "attrs": {"LightSwitch": True, "Brightness": 40}}

                # A write from the app: the device never subscribed, the gateway's server-side
                # subscription delivers it; the app gets s2c_ack and the s2c_noti with res_sn 12.
                await ws.send_json({"cmd": "c2s_write", "req_sn": 12, "data": {"did": did, "attrs": {"Brightness": 10, "WorkMode": "night"}}})
                await asyncio.to_thread(device.wait, "changed")
                assert device.changes == [{"Brightness": 10, "WorkMode": 2}]
                ack = await next_frame(ws, "s2c_ack")
                assert ack["res_sn"] == 12 and ack["did"] == did
                answered = await next_frame(ws, "s2c_noti", lambda f: f.get("res_sn") == 12)
                assert answered["data"]["attrs"] == {"Brightness": 10, "WorkMode": "night"}
                command = json.loads(cloud.request("GET", f"/app/commands/{answered['command_id']}", headers=user_headers))
                assert command["state"] == "applied"

                # A service call, answered by the device with its output.
                call = json.loads(cloud.request("POST", f"/app/devices/{did}/services/Reboot", {"params": {"delay": 3}}, user_headers))
                await asyncio.to_thread(device.wait, "service")
                assert device.calls == [("Reboot", {"delay": 3})]
                for _ in range(50):
                    command = json.loads(cloud.request("GET", f"/app/commands/{call['command_id']}", headers=user_headers))
                    if command["state"] == "acknowledged":
                        break
                    await asyncio.sleep(0.1)
                assert command["state"] == "acknowledged"
                assert command["output"] == {"ok": 1}

                # An event, answered and pushed to the app.
                rc, _ = device.lk.thing_trigger_event(("Overheat", {"Temperature": 88.5}))
                assert rc == 0
                await asyncio.to_thread(device.wait, "event")
                assert device.event_codes == [("Overheat", 200)]
                event = await next_frame(ws, "s2c_event")
                assert event["data"]["event"] == "Overheat" and event["data"]["values"] == {"Temperature": 88.5}

                device.lk.disconnect()
                await next_frame(ws, "s2c_online_status", lambda f: f["data"]["online"] is False)

    try:
        asyncio.run(scenario())
    finally:
        device.lk.destruct()
    assert cloud.process.poll() is None, "the cloud died during the test"


def test_linkkit_answers_rrpc_calls(cloud):
    """RRPC through the REST API to the real device SDK: a custom RRPC topic it subscribed with
    subscribe_rrpc_topic and answers with thing_answer_rrpc, a service called through
    /ext/rrpc/… and answered by thing_answer_service on the same topic, and system RRPC
    (rrpc/request → rrpc/response, which the SDK leaves to the application)."""
    app, identity, _, user_headers = bound_lamp(cloud, "linkkit-rrpc", "rrpc01", "rrpcuser")
    did, pk, dn = identity["did"], identity["productKey"], identity["deviceName"]
    device = Device(cloud, identity)
    custom_topic = f"/{pk}/{dn}/user/get"
    custom_calls = []
    subscribed = threading.Event()

    def on_rrpc(rrpc_id, topic, payload, qos, userdata):
        custom_calls.append((rrpc_id, topic, bytes(payload)))
        device.lk.thing_answer_rrpc(rrpc_id, b"state:" + bytes(payload))

    def on_topic(topic, payload, qos, userdata):
        prefix = f"/sys/{pk}/{dn}/rrpc/request/"
        if topic.startswith(prefix):
            device.lk.publish_topic(f"/sys/{pk}/{dn}/rrpc/response/{topic[len(prefix):]}", bytes(payload)[::-1], 0)

    device.lk.on_topic_rrpc_message = on_rrpc
    device.lk.on_topic_message = on_topic
    # linkkit 1.2.13 has no setter for on_subscribe_rrpc_topic: the SUBACK of the user
    # subscription made after it (SUBACKs come in order) says both are in place.
    device.lk.on_subscribe_topic = lambda mid, granted_qos, userdata: subscribed.set()

    def rrpc(body):
        return json.loads(cloud.request("POST", f"/app/devices/{did}/rrpc", body, user_headers))

    try:
        device.lk.connect_async()
        device.wait("connected")
        assert device.lk.subscribe_rrpc_topic(custom_topic)[0] == 0
        assert device.lk.subscribe_topic(f"/sys/{pk}/{dn}/rrpc/request/+", 0)[0] == 0
        assert subscribed.wait(10), "linkkit: the subscriptions were not acknowledged"

        answer = rrpc({"payload_base64": base64.b64encode(b"on?").decode(), "topic": custom_topic, "timeout_ms": 5000})
        assert base64.b64decode(answer["payload_base64"]) == b"state:on?"
        # One request, on the topic the SDK subscribed: its answer did not come back to it.
        assert custom_calls == [(answer["message_id"], f"/ext/rrpc/{answer['message_id']}{custom_topic}", b"on?")]

        request = {"id": "41", "version": "1.0", "params": {"delay": 2}, "method": "thing.service.Reboot"}
        answer = rrpc({"payload_base64": base64.b64encode(json.dumps(request).encode()).decode(), "topic": f"/sys/{pk}/{dn}/thing/service/Reboot"})
        assert json.loads(base64.b64decode(answer["payload_base64"])) == {"id": "41", "code": 200, "data": {"ok": 1}}
        assert device.calls == [("Reboot", {"delay": 2})]

        answer = rrpc({"payload_base64": base64.b64encode(b"\x01\x02\x03").decode()})
        assert base64.b64decode(answer["payload_base64"]) == b"\x03\x02\x01"

        # The same through the SDK, in the CLI: text and hex, and the typed error of a call the
        # device does not answer (it subscribed to no /ext/rrpc/+/…/user/set).
        home = os.path.join(cloud.directory, "cli")
        tether = lambda *arguments: subprocess.run(  # noqa: E731
            [os.path.join(BIN, "tether"), *arguments], capture_output=True, text=True, timeout=60, env={**os.environ, "TETHER_HOME": home})
        login = tether("login", "--cloud", cloud.base_url, "--app-id", app["appId"], "--discover", "none", "--username", "rrpcuser", "--password", "Passw0rd!")
        assert login.returncode == 0, login.stderr
        called = tether("rrpc", did, "--payload", "on?", "--topic", custom_topic, "--json")
        assert called.returncode == 0, called.stderr
        assert json.loads(called.stdout) == {"payload_base64": base64.b64encode(b"state:on?").decode(), "text": "state:on?"}
        assert tether("rrpc", did, "--hex", "ff01").stdout.strip() == "01ff"  # not UTF-8: printed as hex
        silent = tether("rrpc", did, "--payload", "x", "--topic", f"/{pk}/{dn}/user/set", "--answer-timeout", "0.3")
        assert silent.returncode != 0 and "9500" in silent.stderr, silent.stderr
    finally:
        device.lk.destruct()
    assert cloud.process.poll() is None, "the cloud died during the test"


@contextlib.contextmanager
def registering_cloud():
    """A cloud that accepts dynamic registration on plain TCP (--insecure-registration; production
    needs TLS for it), for the SDK's registration modes."""
    with tempfile.TemporaryDirectory() as directory:
        port, mqtt_port = free_port(), free_port()
        process = subprocess.Popen(
            [os.path.join(CLOUD_BIN, "tether-cloud"), "serve", "--metrics-bind", "none", "--http-port", str(port), "--mqtt-port", str(mqtt_port),
             "--database", f"sqlite:{directory}/cloud.sqlite", "--log-level", "warning", "--insecure-registration"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port)
            wait_for_port(mqtt_port)
            yield Cloud(directory, port, process, mqtt_port)
        finally:
            process.terminate()
            assert process.wait(timeout=10) == 0


def post_once(device, mqtt_port):
    """Connects a linkkit device and posts one report; the codes of the replies."""
    connected, posted, codes = threading.Event(), threading.Event(), []
    device.config_mqtt(port=mqtt_port, secure="", keep_alive=60)
    device.thing_setup(LAMP_TSL)
    device.on_connect = lambda session_flag, rc, userdata: (rc == 0) and connected.set()
    device.on_thing_prop_post = lambda request_id, code, data, message, userdata: (codes.append(code), posted.set())
    try:
        device.connect_async()
        assert connected.wait(10), "linkkit: the connection was refused"
        assert device.thing_post_property({"Brightness": 12})[0] == 0
        assert posted.wait(10)
    finally:
        device.destruct()
    return codes


def test_linkkit_registers_without_whitelist_and_reconnects_with_its_token():
    """Whitelist-free registration with the real SDK: a unit that knows only the product secret
    connects with authType=regnwl, gets {clientId, deviceToken} on /ext/regnwl (the device is
    created then), and connects again with securemode=-2 and the token to post."""
    with registering_cloud() as cloud:
        product = cloud.admin("product", "create", "--name", "Lamp", "--tsl", LAMP_TSL, "--whitelist-free-registration")
        registered, answer = threading.Event(), {}

        def on_registered(rc, client_id, username, password):
            answer.update(rc=rc, client_id=client_id, username=username, password=password)
            registered.set()

        unit = linkkit.LinkKit(host_name="127.0.0.1", product_key=product["productKey"], device_name="unit-77",
                               device_secret="", product_secret=product["productSecret"], auth_type="regnwl")
        unit.config_mqtt(port=cloud.mqtt_port, secure="", keep_alive=60)
        unit.on_device_dynamic_register_nwl_reply = on_registered
        unit.connect_async()
        assert registered.wait(10), "linkkit: no answer on /ext/regnwl"
        unit.destruct()
        assert answer["rc"] == 0 and "securemode=-2" in answer["client_id"], answer
        assert answer["username"] == f"unit-77&{product['productKey']}"

        device = linkkit.LinkKit(host_name="127.0.0.1", product_key=product["productKey"], device_name="unit-77", device_secret="",
                                 client_id=answer["client_id"], username=answer["username"], password=answer["password"])
        assert post_once(device, cloud.mqtt_port) == [200]


def test_linkkit_registers_a_listed_device_and_connects_with_its_secret():
    """Dynamic registration of a device created beforehand, with the real SDK: authType=register
    signed with the product secret, the device's own secret answered on /ext/register, then a
    normal connection signed with that secret."""
    with registering_cloud() as cloud:
        product = cloud.admin("product", "create", "--name", "Lamp", "--tsl", LAMP_TSL)
        listed = cloud.admin("device", "create", "--product", product["productKey"], "--name", "listed-1")
        registered, answer = threading.Event(), {}

        def on_registered(rc, value, userdata):
            answer.update(rc=rc, secret=value)
            registered.set()

        unit = linkkit.LinkKit(host_name="127.0.0.1", product_key=product["productKey"], device_name="listed-1",
                               device_secret="", product_secret=product["productSecret"], auth_type="register")
        unit.config_mqtt(port=cloud.mqtt_port, secure="", keep_alive=60)
        unit.on_device_dynamic_register = on_registered
        unit.connect_async()
        assert registered.wait(10), "linkkit: no answer on /ext/register"
        unit.destruct()
        assert answer == {"rc": 0, "secret": listed["deviceSecret"]}, answer

        device = linkkit.LinkKit(host_name="127.0.0.1", product_key=product["productKey"], device_name="listed-1", device_secret=answer["secret"])
        assert post_once(device, cloud.mqtt_port) == [200]


def test_linkkit_keeps_a_device_shadow(cloud):
    """The device shadow with the real SDK: thing_get_shadow on an empty shadow (407),
    thing_update_shadow (reported), the app's desired state written with the CLI and pushed to
    the SDK's on_thing_shadow_get as a control message, the device applying it and emptying
    desired, and the version rule refusing a stale write on both sides."""
    app, identity, _, _ = bound_lamp(cloud, "linkkit-shadow", "shadow01", "shadowuser")
    did, pk, dn = identity["did"], identity["productKey"], identity["deviceName"]
    device = Device(cloud, identity)
    messages, arrived = [], threading.Condition()

    def on_shadow(payload, userdata):
        with arrived:
            messages.append(payload)
            arrived.notify_all()

    def next_shadow(predicate=lambda message: True, timeout=10):
        with arrived:
            assert arrived.wait_for(lambda: any(predicate(m) for m in messages), timeout), f"linkkit: no such shadow message in {messages}"
            found = next(m for m in messages if predicate(m))
            messages.remove(found)
            return found

    device.lk.on_thing_shadow_get = on_shadow
    home = os.path.join(cloud.directory, "cli-shadow")
    tether = lambda *arguments: subprocess.run(  # noqa: E731
        [os.path.join(BIN, "tether"), *arguments], capture_output=True, text=True, timeout=60, env={**os.environ, "TETHER_HOME": home})
    try:
        device.lk.connect_async()
        device.wait("connected")
        assert device.lk.thing_get_shadow()[0] == 0
        assert next_shadow()["payload"]["content"]["errorcode"] == "407"
        assert device.lk.thing_update_shadow({"color": "red", "size": 2}, 1)[0] == 0
        assert next_shadow()["payload"] == {"status": "success", "version": 1}

        login = tether("login", "--cloud", cloud.base_url, "--app-id", app["appId"], "--discover", "none", "--username", "shadowuser", "--password", "Passw0rd!")
        assert login.returncode == 0, login.stderr
        shown = tether("shadow", did, "--json")
        assert shown.returncode == 0, shown.stderr
        shadow = json.loads(shown.stdout)
        assert shadow["state"] == {"reported": {"color": "red", "size": 2}} and shadow["version"] == 1

        written = tether("shadow", did, "--desired", '{"color": "blue"}', "--version", "2", "--json")
        assert written.returncode == 0, written.stderr
        control = next_shadow(lambda m: m.get("method") == "control")
        assert control["payload"]["state"]["desired"] == {"color": "blue"} and control["version"] == 2
        assert device.lk.local_get_latest_shadow().get_version() == 2

        # The device applies it: reports blue (version 3), then empties desired (version 4).
        assert device.lk.thing_update_shadow({"color": "blue"}, 3)[0] == 0
        assert next_shadow()["payload"] == {"status": "success", "version": 3}
        clear = {"method": "update", "state": {"desired": "null"}, "version": 4}
        assert device.lk.publish_topic(f"/shadow/update/{pk}/{dn}", json.dumps(clear), 1)[0] == 0
        assert next_shadow()["payload"] == {"status": "success", "version": 4}
        shadow = json.loads(tether("shadow", did, "--json").stdout)
        assert shadow["state"] == {"reported": {"color": "blue", "size": 2}} and shadow["version"] == 4

        # Stale writes lose on both sides.
        assert device.lk.thing_update_shadow({"color": "green"}, 4)[0] == 0
        assert next_shadow()["payload"]["content"]["errorcode"] == "409"
        stale = tether("shadow", did, "--desired", '{"color": "green"}', "--version", "3")
        assert stale.returncode != 0 and "9501" in stale.stderr, stale.stderr
        printed = tether("shadow", did)
        assert printed.returncode == 0 and "version 4" in printed.stdout and "color = \"blue\"" in printed.stdout, printed.stdout
    finally:
        device.lk.destruct()
    assert cloud.process.poll() is None, "the cloud died during the test"


def test_linkkit_custom_topics(cloud):
    """Custom topics with the real SDK and the product's default classes: publish_topic on
    user/update (pub) reaches the app on the WebSocket as s2c_user_topic; subscribe_topic on
    user/get (sub) receives what the app publishes with the CLI (tether publish), and
    on_topic_message gets it; publishing to user/update from the app is refused (9015)."""
    app, identity, session, _ = bound_lamp(cloud, "linkkit-topics", "topics01", "topicsuser")
    did, pk, dn = identity["did"], identity["productKey"], identity["deviceName"]
    device = Device(cloud, identity)
    received, subscribed = [], threading.Event()
    got = threading.Event()

    def on_topic(topic, payload, qos, userdata):
        received.append((topic, bytes(payload)))
        got.set()

    device.lk.on_topic_message = on_topic
    device.lk.on_subscribe_topic = lambda mid, granted_qos, userdata: subscribed.set()
    home = os.path.join(cloud.directory, "cli-topics")
    tether = lambda *arguments: subprocess.run(  # noqa: E731
        [os.path.join(BIN, "tether"), *arguments], capture_output=True, text=True, timeout=60, env={**os.environ, "TETHER_HOME": home})

    async def scenario():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(cloud.ws_url) as ws:
                await ws.send_json({"cmd": "login_req", "data": {
                    "appid": app["appId"], "uid": session["uid"], "token": session["token"], "p0_type": "attrs_v4", "auto_subscribe": True}})
                assert (await next_frame(ws, "login_res"))["data"]["success"] is True
                device.lk.connect_async()
                await asyncio.to_thread(device.wait, "connected")
                await next_frame(ws, "s2c_online_status", lambda f: f["data"]["online"] is True)
                assert device.lk.publish_topic(f"/{pk}/{dn}/user/update", b"\x00temp=21", 1)[0] == 0
                frame = await next_frame(ws, "s2c_user_topic")
                assert frame["data"]["did"] == did and frame["data"]["topic"] == f"/{pk}/{dn}/user/update"
                assert base64.b64decode(frame["data"]["payload_base64"]) == b"\x00temp=21"

    try:
        asyncio.run(scenario())
        assert device.lk.subscribe_topic(f"/{pk}/{dn}/user/get", 1)[0] == 0
        assert subscribed.wait(10), "linkkit: the subscription was not acknowledged"
        login = tether("login", "--cloud", cloud.base_url, "--app-id", app["appId"], "--discover", "none", "--username", "topicsuser", "--password", "Passw0rd!")
        assert login.returncode == 0, login.stderr
        sent = tether("publish", did, "--topic", f"/{pk}/{dn}/user/get", "--payload", "reset", "--qos", "1")
        assert sent.returncode == 0, sent.stderr
        assert got.wait(10), "linkkit: nothing on user/get"
        assert received == [(f"/{pk}/{dn}/user/get", b"reset")]
        refused = tether("publish", did, "--topic", f"/{pk}/{dn}/user/update", "--payload", "x")
        assert refused.returncode != 0 and "9015" in refused.stderr, refused.stderr
    finally:
        device.lk.destruct()
    assert cloud.process.poll() is None, "the cloud died during the test"


def test_linkkit_upgrades_its_firmware(cloud):
    """OTA with the real SDK: ota_report_version tells the cloud what runs; `tether firmware
    --upgrade --wait` offers a package the administrator added, pushed to the SDK's
    on_ota_message_arrived; download_ota_firmware fetches the signed URL and checks its SHA-256;
    progress goes up on /ota/device/progress and the new version on /ota/device/inform, and the
    CLI sees the upgrade applied. Then an administrator's job for the whole product, pulled with
    query_ota_firmware (the firmware/get reply) as well as pushed."""
    app, identity, _, _ = bound_lamp(cloud, "linkkit-ota", "ota01", "otauser")
    did, pk, dn = identity["did"], identity["productKey"], identity["deviceName"]
    device = Device(cloud, identity)
    notices, arrived = [], threading.Condition()
    home = os.path.join(cloud.directory, "cli-ota")
    tether = lambda *arguments: subprocess.run(  # noqa: E731
        [os.path.join(BIN, "tether"), *arguments], capture_output=True, text=True, timeout=60, env={**os.environ, "TETHER_HOME": home})

    def install(notice_type, version, size, url, sign_method, sign, module, extra):
        # The SDK's own download and digest check, then the reports a device makes.
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "firmware.bin")
            result = device.lk.download_ota_firmware(url, path, sign_method, sign)
            with arrived:
                notices.append({"type": notice_type, "version": version, "size": size, "url": url, "signMethod": sign_method, "result": result,
                                "bytes": os.path.getsize(path) if os.path.exists(path) else -1})
                arrived.notify_all()
        for step in ("50", "100"):
            progress = {"id": "1", "params": {"step": step, "desc": "installing", "module": "default"}}
            device.lk.publish_topic(f"/ota/device/progress/{pk}/{dn}", json.dumps(progress), 0)
        device.lk.ota_report_version(None, version)

    def next_notice(predicate=lambda notice: True, timeout=20):
        with arrived:
            assert arrived.wait_for(lambda: any(predicate(n) for n in notices), timeout), f"linkkit: no such OTA notice in {notices}"
            found = next(n for n in notices if predicate(n))
            notices.remove(found)
            return found

    device.lk.on_ota_message_arrived = lambda *notice: threading.Thread(target=install, args=notice, daemon=True).start()
    with tempfile.NamedTemporaryFile(suffix=".bin") as package:
        package.write(os.urandom(150_000))
        package.flush()
        digest = subprocess.run(["sha256sum", package.name], capture_output=True, text=True, check=True).stdout.split()[0]
        first = cloud.admin("firmware", "add", "--product", pk, "--version", "2.0.0", "--file", package.name)
        second = cloud.admin("firmware", "add", "--product", pk, "--version", "3.0.0", "--file", package.name)
    assert first["sha256"] == digest and first["size"] == 150_000
    try:
        device.lk.connect_async()
        device.wait("connected")
        # ota_report_version and query_ota_firmware compare paho's MQTTMessageInfo with 0, so
        # they answer OTA_PUB_FAILED after publishing; what counts is what the cloud receives.
        device.lk.ota_report_version(None, "1.0.0")
        login = tether("login", "--cloud", cloud.base_url, "--app-id", app["appId"], "--discover", "none", "--username", "otauser", "--password", "Passw0rd!")
        assert login.returncode == 0, login.stderr
        deadline = time.monotonic() + 10
        while True:
            listed = tether("firmware", did, "--json")
            assert listed.returncode == 0, listed.stderr
            if json.loads(listed.stdout)["versions"] == {"default": "1.0.0"}:
                break
            assert time.monotonic() < deadline, "the cloud did not record the reported version"
            time.sleep(0.1)

        upgraded = tether("firmware", did, "--upgrade", str(first["id"]), "--wait", "--wait-timeout", "40", "--json")
        assert upgraded.returncode == 0, upgraded.stderr
        lines = [json.loads(line) for line in upgraded.stdout.splitlines()]
        assert lines[-1]["state"] == "applied" and lines[-1]["version"] == "2.0.0", lines
        assert any(line["state"] == "acknowledged" and line["progress"] == 50 for line in lines), lines
        pushed = next_notice()
        assert pushed["type"] == 1 and pushed["result"] == linkkit.LinkKit.ErrorCode.SUCCESS and pushed["bytes"] == 150_000 and pushed["signMethod"] == "SHA256", pushed
        assert pushed["url"].startswith(f"{cloud.base_url}/ota/firmware/{first['id']}?expires=")
        shown = json.loads(tether("firmware", did, "--json").stdout)
        assert shown["versions"] == {"default": "2.0.0"} and shown["upgrades"][0]["state"] == "applied"

        # A job for the product; the device also asks (firmware/get) and gets the same offer.
        job = cloud.admin("firmware", "upgrade", "--id", str(second["id"]))
        assert job["offered"] == [did], job
        device.lk.query_ota_firmware()
        pulled = next_notice(lambda n: n["type"] == 2)
        assert pulled["version"] == "3.0.0" and pulled["result"] == linkkit.LinkKit.ErrorCode.SUCCESS, pulled
        deadline = time.monotonic() + 20
        while cloud.admin("firmware", "job", "--id", str(job["jobId"]))[0]["state"] != "applied":
            assert time.monotonic() < deadline, "the job's upgrade was not applied"
            time.sleep(0.2)
        # A tampered download URL is refused, and the SDK says so.
        assert device.lk.download_ota_firmware(pushed["url"] + "0", os.path.join(cloud.directory, "x.bin"), "SHA256", digest) == linkkit.LinkKit.ErrorCode.OTA_INVALID_URL
    finally:
        device.lk.destruct()
    assert cloud.process.poll() is None, "the cloud died during the test"


def test_linkkit_gateway_brings_its_sub_devices(cloud):
    """A hub with the real SDK: gateway_add_subdev_topo proves each child with its secret,
    gateway_login_subdev brings it online (the app sees it), the hub posts for the child on the
    child's topic and the app's write to the child arrives on the hub's connection; logout and
    gateway_delete_subdev_topo take it away again. A child with a wrong secret is refused."""
    app, child, _, user_headers = bound_lamp(cloud, "linkkit-hub", "child01", "hubuser")
    hub = cloud.admin("device", "create", "--product", child["productKey"], "--name", "hub01")
    did, pk, dn, secret = child["did"], child["productKey"], child["deviceName"], child["deviceSecret"]
    device = Device(cloud, hub)
    replies, messages, arrived = [], [], threading.Condition()

    def record(kind):
        def callback(request_id, code, data, message, userdata):
            with arrived:
                replies.append((kind, code, data))
                arrived.notify_all()
        return callback

    def on_topic(topic, payload, qos, userdata):
        with arrived:
            messages.append((topic, json.loads(payload)))
            arrived.notify_all()

    def next_reply(kind, timeout=10):
        with arrived:
            assert arrived.wait_for(lambda: any(r[0] == kind for r in replies), timeout), f"linkkit: no {kind} reply in {replies}"
            found = next(r for r in replies if r[0] == kind)
            replies.remove(found)
            return found

    device.lk.on_gateway_add_subdev_topo_reply = record("add")
    device.lk.on_gateway_delete_subdev_topo_reply = record("delete")
    device.lk.on_gateway_login_subdev_reply = record("login")
    device.lk.on_gateway_logout_subdev_reply = record("logout")
    device.lk.on_topic_message = on_topic
    online = lambda: json.loads(cloud.request("GET", "/app/bindings", None, user_headers))["devices"][0]["is_online"]  # noqa: E731
    try:
        device.lk.connect_async()
        device.wait("connected")
        assert device.lk.gateway_add_subdev_topo([[pk, dn, "wrong"]])[0] == 0
        _, code, _ = next_reply("add")
        assert code == 460
        assert device.lk.gateway_add_subdev_topo([[pk, dn, secret]])[0] == 0
        _, code, data = next_reply("add")
        assert code == 200 and data == [{"productKey": pk, "deviceName": dn}], data
        assert device.lk.gateway_login_subdev([[pk, dn, secret]])[0] == 0
        _, code, data = next_reply("login")
        assert code == 200 and data == [{"productKey": pk, "deviceName": dn}], data
        assert online() is True

        # The hub reports for the child, on the child's topic.
        post = {"id": "41", "version": "1.0", "params": {"Brightness": 33}, "method": "thing.event.property.post"}
        assert device.lk.publish_topic(f"/sys/{pk}/{dn}/thing/event/property/post", json.dumps(post), 1)[0] == 0
        deadline = time.monotonic() + 10
        while json.loads(cloud.request("GET", f"/app/devdata/{did}/latest", None, user_headers)).get("attr", {}).get("Brightness") != 33:
            assert time.monotonic() < deadline, "the child's report was not stored"
            time.sleep(0.1)
        # The app writes to the child: the set arrives on the hub's connection, for the child.
        answer = json.loads(cloud.request("POST", f"/app/control/{did}", {"attrs": {"Brightness": 5}}, user_headers))
        with arrived:
            assert arrived.wait_for(lambda: any(t.endswith(f"/{pk}/{dn}/thing/service/property/set") for t, _ in messages), 10), messages
            topic, request = next((t, p) for t, p in messages if t.endswith("/thing/service/property/set"))
        assert topic == f"/sys/{pk}/{dn}/thing/service/property/set" and request["params"] == {"Brightness": 5} and request["id"] == str(answer["command_id"])

        assert device.lk.gateway_logout_subdev([[pk, dn]])[0] == 0
        _, code, _ = next_reply("logout")
        assert code == 200 and online() is False
        assert device.lk.gateway_delete_subdev_topo([[pk, dn]])[0] == 0
        _, code, data = next_reply("delete")
        assert code == 200 and data == [{"productKey": pk, "deviceName": dn}]
        # Out of the topology, the child cannot be logged in again.
        assert device.lk.gateway_login_subdev([[pk, dn, secret]])[0] == 0
        _, code, _ = next_reply("login")
        assert code == 460
    finally:
        device.lk.destruct()
    assert cloud.process.poll() is None, "the cloud died during the test"


def test_linkkit_devices_run_a_scene_and_a_rule(cloud):
    """A scene of a device task, a delay and a group task reaches two real linkkit lamps: the
    first at once, both of the group after the delay, each as a property set they apply. Then a
    rule: the first lamp's Overheat alert event switches the second lamp off."""
    app, first, session, user_headers = bound_lamp(cloud, "scenes", "scene01", "sceneuser")
    second = cloud.admin("device", "create", "--product", first["productKey"], "--name", "scene02")
    bound = json.loads(cloud.request("POST", "/app/bindings", {"devices": [{"did": second["did"], "passcode": second["passcode"]}]}, user_headers))
    assert bound["success"] == [second["did"]]
    devices = [Device(cloud, first), Device(cloud, second)]
    try:
        for device in devices:
            device.lk.connect_async()
            device.wait("connected")
        for identity in (first, second):
            deadline = time.time() + 10
            while not json.loads(cloud.request("GET", f"/app/devices/{identity['did']}", headers=user_headers))["is_online"]:
                assert time.time() < deadline, "the lamp is not shown online"
                time.sleep(0.1)
        group = json.loads(cloud.request("POST", "/app/group", {"group_name": "Lamps", "product_key": first["productKey"]}, user_headers))
        added = json.loads(cloud.request("POST", f"/app/group/{group['id']}/devices", {"dids": [first["did"], second["did"]]}, user_headers))
        assert added["success"] == [first["did"], second["did"]]
        # The reference's form: enums by index in a scene.
        scene = json.loads(cloud.request("POST", "/app/scene", {"scene_name": "Reading", "tasks": [
            {"task_type": "device", "did": first["did"], "attrs": {"WorkMode": 1}},
            {"task_type": "delay", "time": 2},
            {"task_type": "group", "group_id": group["id"], "attrs": {"Brightness": 25}},
        ]}, user_headers))
        assert json.loads(cloud.request("GET", f"/app/scene/{scene['id']}/task", headers=user_headers))["status"] == 3

        started = time.time()
        run = json.loads(cloud.request("POST", f"/app/scene/{scene['id']}/task", headers=user_headers))
        devices[0].wait("changed")
        assert devices[0].changes == [{"WorkMode": 1}]
        assert json.loads(cloud.request("GET", f"/app/scene/{scene['id']}/task", headers=user_headers))["status"] == 0
        for device in devices:
            device.wait("changed", timeout=15)
            assert device.changes[-1] == {"Brightness": 25}
        assert time.time() - started >= 2, "the group's task went before its delay"
        deadline = time.time() + 10
        while (status := json.loads(cloud.request("GET", f"/app/scene/{scene['id']}/task", headers=user_headers)))["status"] == 0:
            assert time.time() < deadline, status
            time.sleep(0.2)
        assert status["status"] == 1 and status["run_id"] == run["run_id"]
        assert [(step["step"], step["did"]) for step in status["steps"]] == [(0, first["did"])] + sorted([(2, first["did"]), (2, second["did"])])
        for step in status["steps"]:
            deadline = time.time() + 10
            while (command := json.loads(cloud.request("GET", f"/app/commands/{step['command_id']}", headers=user_headers)))["state"] == "sent":
                assert time.time() < deadline, command
                time.sleep(0.1)
            assert command["source"] == "scene" and command["state"] in ("acknowledged", "applied"), command

        rule = json.loads(cloud.request("POST", "/app/rules", {
            "name": "overheat", "did": first["did"], "product_key": first["productKey"], "event": "alert",
            "event_attr": {"attr_name": "Overheat", "value": "1"},
            "output": [[{"type": "devctrl", "did": second["did"], "attrs": {"LightSwitch": False}}]],
        }, user_headers))
        rc, _ = devices[0].lk.thing_trigger_event(("Overheat", {"Temperature": 91.0}))
        assert rc == 0
        devices[1].wait("changed", timeout=15)
        assert devices[1].changes[-1] == {"LightSwitch": 0}
        fired = json.loads(cloud.request("GET", f"/app/rules/{rule['rule_id']}", headers=user_headers))
        assert fired["last_fired_at"] is not None
    finally:
        for device in devices:
            device.lk.destruct()
    assert cloud.process.poll() is None, "the cloud died during the test"
