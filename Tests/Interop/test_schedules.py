"""Schedules, groups, scenes and rules end to end with every part a process on loopback: `tether schedule` (the SDK in the
CLI) writes a schedule to `tether-cloud serve`, whose scheduler fires it on the real clock
through the gateway to a device of `tether-agent simulate`; the run is in the schedule's log and
the device reports the value. Bad fields are refused before anything is sent."""
import datetime
import json
import os
import subprocess
import time

from conftest import BIN, ROOT
from test_sdk_e2e import stack  # noqa: F401 (the fixture: a cloud on its own ports and database)

PASSWORD = "sched-Passw0rd"


def test_schedule_fires_on_the_device(stack):
    app = stack.admin("app", "create", "--name", "sched")
    product = stack.admin("product", "create", "--name", "Pet house", "--datapoints", os.path.join(ROOT, "products", "pet-house.json"))
    lamp = stack.admin("device", "create", "--product", product["productKey"], "--name", "sched-1", "--mac", "02:5c:ed:00:00:01")
    credentials = os.path.join(stack.directory, "credentials.json")
    with open(credentials, "w") as file:
        json.dump([lamp], file)
    agent = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--product", os.path.join(ROOT, "products", "pet-house.json"),
         "--no-lan", "--interval", "0", "--cloud", f"127.0.0.1:{stack.mqtt_port}", "--credentials", credentials],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        alice = os.path.join(stack.directory, "alice")
        stack.tether(alice, "register", "--cloud", f"http://127.0.0.1:{stack.http_port}", "--app-id", app["appId"], "--username", "alice",
                     "--password", PASSWORD)
        stack.tether(alice, "bind", "--did", lamp["did"], "--passcode", lamp["passcode"])

        # Refused by the same codec the cloud reads, naming the option.
        bad = stack.tether(alice, "schedule", "create", "--did", lamp["did"], "--time", "07:00", "--weekly", "mon", "--tz", "Mars/Olympus",
                           "--set", "Motor_Speed=3", check=False)
        assert bad.returncode != 0 and "--tz" in bad.stderr
        refused = stack.tether(alice, "schedule", "create", "--did", lamp["did"], "--time", "07:00", "--weekly", "mon", "--set", "Motor_Speed=99",
                               check=False)
        assert refused.returncode != 0 and "9025" in refused.stderr, refused.stderr

        # Once, at the next whole minute (two if this one is nearly over), in UTC.
        now = datetime.datetime.now(datetime.timezone.utc)
        when = (now + datetime.timedelta(minutes=2 if now.second > 50 else 1)).replace(second=0, microsecond=0)
        created = json.loads(stack.tether(
            alice, "schedule", "create", "--did", lamp["did"], "--time", when.strftime("%H:%M"), "--date", when.strftime("%Y-%m-%d"),
            "--set", "Motor_Speed=3", "--remark", "interop", "--json").stdout)
        assert created["next_run"] == int(when.timestamp()) and created["repeat"] == "none" and created["attrs"] == {"Motor_Speed": 3}
        listed = json.loads(stack.tether(alice, "schedule", "list", "--did", lamp["did"], "--json").stdout)
        assert [entry["id"] for entry in listed] == [created["id"]]
        weekly = json.loads(stack.tether(
            alice, "schedule", "create", "--did", lamp["did"], "--time", "06:30", "--weekly", "sat,sun", "--tz", "Europe/Berlin",
            "--set", "LED_OnOff=true", "--json").stdout)
        assert weekly["tz"] == "Europe/Berlin" and weekly["next_run"] > time.time()
        assert json.loads(stack.tether(alice, "schedule", "disable", weekly["id"], "--json").stdout)["next_run"] is None
        assert json.loads(stack.tether(alice, "schedule", "enable", weekly["id"], "--json").stdout)["next_run"] == weekly["next_run"]

        # The cloud fires it on its own clock; the device answers and reports.
        deadline = time.time() + 90
        runs = []
        while time.time() < deadline:
            runs = json.loads(stack.tether(alice, "schedule", "logs", created["id"], "--json").stdout)
            if runs and runs[0]["state"] in ("acknowledged", "applied"):
                break
            time.sleep(1)
        assert len(runs) == 1, runs
        run = runs[0]
        assert run["state"] in ("acknowledged", "applied") and run["planned_at"] == int(when.timestamp()) * 1000
        assert 0 <= run["fired_at"] - run["planned_at"] < 5_000
        status = json.loads(stack.tether(alice, "status", lamp["did"], "--json").stdout)
        assert status["data"]["Motor_Speed"] == 3
        assert json.loads(stack.tether(alice, "schedule", "show", created["id"], "--json").stdout)["next_run"] is None

        # A group of the product, written to as one through the CLI.
        group = json.loads(stack.tether(alice, "group", "create", "Pets", "--product-key", product["productKey"], "--json").stdout)
        stack.tether(alice, "group", "add", group["id"], lamp["did"])
        assert [d["did"] for d in json.loads(stack.tether(alice, "group", "devices", group["id"], "--json").stdout)] == [lamp["did"]]
        results = json.loads(stack.tether(alice, "group", "write", group["id"], "Motor_Speed=4", "--json").stdout)
        assert [(r["did"], r["result"]) for r in results] == [(lamp["did"], True)] and "command_id" in results[0]
        deadline = time.time() + 15
        while json.loads(stack.tether(alice, "status", lamp["did"], "--json").stdout)["data"]["Motor_Speed"] != 4:
            assert time.time() < deadline, "the group's write did not reach the device"
            time.sleep(0.5)

        # A scene through the CLI: the device written at once, the group after a two-second delay.
        scene = json.loads(stack.tether(
            alice, "scene", "create", "Evening", "--task", f"device {lamp['did']} Motor_Speed=2", "--task", "delay 2",
            "--task", f"group {group['id']} Motor_Speed=5", "--json").stdout)
        assert [task["task_type"] for task in scene["tasks"]] == ["device", "delay", "group"] and scene["tasks"][2]["group_name"] == "Pets"
        bad = stack.tether(alice, "scene", "create", "Bad", "--task", "delay 4000", check=False)
        assert bad.returncode != 0 and "time" in bad.stderr, bad.stderr
        assert json.loads(stack.tether(alice, "scene", "status", scene["id"], "--json").stdout)["status"] == 3
        # A rule through the CLI: when the device reports Motor_Speed 5, its LED goes on.
        assert json.loads(stack.tether(alice, "status", lamp["did"], "--json").stdout)["data"]["LED_OnOff"] is False
        rule = json.loads(stack.tether(
            alice, "rule", "create", "--name", "fast means light", "--did", lamp["did"], "--product-key", product["productKey"], "--event", "data",
            "--input", f"pet={lamp['did']}@{product['productKey']}", "--when", "pet.Motor_Speed == 5", "--then", f"device {lamp['did']} LED_OnOff=true",
            "--json").stdout)
        assert rule["rule_id"].startswith("rl_") and rule["condition"] == [[{"left": "pet.Motor_Speed", "opt": "==", "right": "5"}]]
        refused = stack.tether(alice, "rule", "create", "--name", "x", "--did", lamp["did"], "--product-key", product["productKey"], "--event", "alert",
                               "--attr", "Motor_Speed", "--then", "delay 1", check=False)
        assert refused.returncode != 0 and "9025" in refused.stderr, refused.stderr
        started = time.time()
        finished = json.loads(stack.tether(alice, "scene", "run", scene["id"], "--wait", "--json").stdout)
        assert finished["status"] == 1 and [step["step"] for step in finished["steps"]] == [0, 2], finished
        assert time.time() - started >= 2
        deadline = time.time() + 15
        while json.loads(stack.tether(alice, "status", lamp["did"], "--json").stdout)["data"]["Motor_Speed"] != 5:
            assert time.time() < deadline, "the scene's group task did not reach the device"
            time.sleep(0.5)
        deadline = time.time() + 15
        while json.loads(stack.tether(alice, "status", lamp["did"], "--json").stdout)["data"]["LED_OnOff"] is not True:
            assert time.time() < deadline, "the rule did not write the device"
            time.sleep(0.5)
        assert json.loads(stack.tether(alice, "rule", "show", rule["rule_id"], "--json").stdout)["last_fired_at"] is not None
        stack.tether(alice, "rule", "delete", rule["rule_id"])
        stack.tether(alice, "scene", "delete", scene["id"])
        stack.tether(alice, "group", "delete", group["id"])

        stack.tether(alice, "schedule", "delete", created["id"])
        gone = stack.tether(alice, "schedule", "show", created["id"], check=False)
        assert gone.returncode != 0 and "9030" in gone.stderr
    finally:
        agent.terminate()
        agent.wait(timeout=10)
