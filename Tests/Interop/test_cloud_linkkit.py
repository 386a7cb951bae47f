"""The real Aliyun device SDK (PyPI aliyun-iot-linkkit) against the cloud's gateway on loopback,
with no TLS, and an app on the WebSocket M2M API (aiohttp) watching the device: the device
connects with its own signature, posts properties, receives a property set it never subscribed
to, answers a service call and posts an event, and the app sees each change, with the res_sn
of its write."""
import asyncio
import json
import os
import threading

import aiohttp
import paho.mqtt.client as paho

from conftest import ROOT

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


def test_linkkit_device_and_websocket_app(cloud):
    app = cloud.admin("app", "create", "--name", "linkkit")
    product = cloud.admin("product", "create", "--name", "Lamp", "--tsl", LAMP_TSL)
    identity = cloud.admin("device", "create", "--product", product["productKey"], "--name", "dev01")
    headers = {"X-Gizwits-Application-Id": app["appId"]}
    session = json.loads(cloud.request("POST", "/app/users", {"username": "lampuser", "password": "Passw0rd!"}, headers))
    user_headers = {**headers, "X-Gizwits-User-token": session["token"]}
    bound = json.loads(cloud.request("POST", "/app/bindings", {"devices": [{"did": identity["did"], "passcode": identity["passcode"]}]}, user_headers))
    assert bound["success"] == [identity["did"]]
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
