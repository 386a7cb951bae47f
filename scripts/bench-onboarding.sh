#!/usr/bin/env bash
# Onboarding, measured (issue 15): the smart-config encoders and ESP-IDF handshakes per call and
# each mode's time to done against an in-process agent (tether-benchmarks onboarding); the SDK's
# ESP-IDF client side by side with Espressif's esp_prov (prov_util) against the same agent, time
# to "connected" per security version; and the time from start to "bound" through a local cloud
# for ESP-IDF, GAgent 0x0001 and web_config.cgi (tether onboard … --pair, as processes). Release
# builds; esp_prov from .venv-test (Tests/Interop/requirements.txt). Loopback only.
#
#   scripts/bench-onboarding.sh [--attempts N]
set -euo pipefail
cd "$(dirname "$0")/.."
attempts=10
while [ $# -gt 0 ]; do
    case "$1" in
        --attempts) attempts="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
python=.venv-test/bin/python
[ -x "$python" ] || { echo "needs .venv-test with esp-rainmaker-cli (python3 -m venv .venv-test && .venv-test/bin/pip install -r Tests/Interop/requirements.txt)" >&2; exit 1; }
swift build -c release --product tether >&2
swift build -c release --product tether-agent >&2
swift build -c release --package-path Cloud --product tether-cloud >&2
swift build -c release --package-path Benchmarks --product tether-benchmarks >&2
bin="$(swift build -c release --show-bin-path)"
cloud_bin="$(swift build -c release --package-path Cloud --show-bin-path)"
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-benchmarks"
echo "$(nproc) cores; $attempts attempts per mode" >&2

echo "== in-process (tether-benchmarks onboarding)"
"$bench" onboarding --attempts "$((attempts * 2))"

echo "== processes on loopback"
BIN="$bin" CLOUD_BIN="$cloud_bin" ATTEMPTS="$attempts" "$python" - <<'PY'
import json, os, socket, statistics, subprocess, tempfile, time
from rmaker_tools.rmaker_prov.prov import prov_util

BIN, CLOUD_BIN, N = os.environ["BIN"], os.environ["CLOUD_BIN"], int(os.environ["ATTEMPTS"])
PRODUCT = os.path.join("products", "pet-house.json")
work = tempfile.mkdtemp()
networks = os.path.join(work, "networks.json")
json.dump([{"ssid": "HomeNet", "password": "correct-horse"}], open(networks, "w"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agent(*extra):
    process = subprocess.Popen(
        [f"{BIN}/tether-agent", "simulate", "--product", PRODUCT, "--bind", "127.0.0.1", "--wifi-networks", networks, "--udp-port", "0",
         "--tcp-port", "0", "--interval", "0", "--announce", "none", "--json", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return process, json.loads(process.stdout.readline())


def stop(process):
    process.terminate()
    process.wait(timeout=10)


def sdk_ms(arguments, home=None):
    trace = os.path.join(work, "trace.json")
    env = {**os.environ, **({"TETHER_HOME": home} if home else {})}
    result = subprocess.run([f"{BIN}/tether", *arguments, "--json", "--trace", trace], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.load(open(trace))["entries"][-1]["t_ms"]


def esp_prov_ms(port, security):
    start = time.perf_counter()
    transport = prov_util.get_transport("softap", f"127.0.0.1:{port}")
    if security == 2:
        session = prov_util.get_security(2, sec_patch_ver=prov_util.get_sec_patch_ver(transport), username="wifiprov", password="abcd1234")
    else:
        session = prov_util.get_security(security, pop="abcd1234")
    assert prov_util.establish_session(transport, session)
    assert prov_util.send_wifi_config(transport, session, "HomeNet", "correct-horse")
    assert prov_util.apply_wifi_config(transport, session)
    while prov_util.get_wifi_config(transport, session) != "connected":
        pass
    return (time.perf_counter() - start) * 1000


def esp_flags(security):
    flags = ["--provisioning", "esp-idf", "--prov-port", "0", "--security", str(security)]
    return flags + (["--sec2-username", "wifiprov", "--sec2-password", "abcd1234"] if security == 2 else ["--pop", "abcd1234"])


def sdk_esp_flags(port, security):
    flags = ["onboard", "esp", "--device", f"127.0.0.1:{port}", "--security", str(security), "--wifi-ssid", "HomeNet", "--wifi-password", "correct-horse"]
    return flags + (["--sec2-username", "wifiprov", "--sec2-password", "abcd1234"] if security == 2 else ["--pop", "abcd1234"])


print("ESP-IDF to \"connected\", the agent's device, median ms (SDK: the trace's outcome; esp_prov: prov_util's calls, imports excluded)")
print(f"{'security':<10} {'SDK':>8} {'esp_prov':>10} {'SDK/esp_prov':>14}")
for security in (0, 1, 2):
    ours, theirs = [], []
    for _ in range(N):
        process, line = agent(*esp_flags(security))
        ours.append(sdk_ms(sdk_esp_flags(line["port"], security)))
        stop(process)
        process, line = agent(*esp_flags(security))
        theirs.append(esp_prov_ms(line["port"], security))
        stop(process)
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"{security:<10} {a:>8.1f} {b:>10.1f} {a / b:>14.2f}")

# The binding: a cloud, a user, a fresh device per attempt.
http, mqtt = free_port(), free_port()
cloud = subprocess.Popen([f"{CLOUD_BIN}/tether-cloud", "serve", "--metrics-bind", "none", "--http-port", str(http), "--mqtt-port", str(mqtt),
                          "--database", f"sqlite:{work}/cloud.sqlite", "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", http), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)

    def admin(*arguments):
        return json.loads(subprocess.run([f"{CLOUD_BIN}/tether-cloud", "admin", *arguments, "--database", f"sqlite:{work}/cloud.sqlite", "--json"],
                                         check=True, capture_output=True, text=True).stdout)

    app = admin("app", "create", "--name", "bench")
    product = admin("product", "create", "--name", "Pet house", "--datapoints", PRODUCT)
    home = os.path.join(work, "user")
    subprocess.run([f"{BIN}/tether", "register", "--cloud", f"http://127.0.0.1:{http}", "--app-id", app["appId"], "--discover", "none",
                    "--username", "bencher", "--password", "Bench-Passw0rd"], check=True, capture_output=True, env={**os.environ, "TETHER_HOME": home})
    print()
    print("start to \"bound\" through a local cloud (SQLite), median ms: credentials, join, the device's MQTT sign-in, the token, the push")
    modes = {
        "esp-idf sec1": (lambda: esp_flags(1), lambda line: sdk_esp_flags(line["port"], 1)),
        "gagent 0x0001": (lambda: ["--softap"], lambda line: ["onboard", "softap", "--device", f"127.0.0.1:{line['udpPort']}", "--listen", "127.0.0.1",
                                                             "--no-wait", "--wifi-ssid", "HomeNet", "--wifi-password", "correct-horse"]),
        "gagent web_config.cgi": (lambda: ["--softap", "--web-config-port", "0"],
                                  lambda line: ["onboard", "softap", "--device", f"127.0.0.1:{line['udpPort']}", "--listen", "127.0.0.1", "--no-wait",
                                                "--web-config-port", str(line["webConfigPort"]), "--wifi-ssid", "HomeNet", "--wifi-password", "correct-horse"]),
    }
    for name, (agent_flags, sdk_flags) in modes.items():
        samples = []
        for attempt in range(N):
            device = admin("device", "create", "--product", product["productKey"], "--name", f"{name.replace(' ', '-').replace('.', '')}-{attempt}")
            credentials = os.path.join(work, "credentials.json")
            json.dump([device], open(credentials, "w"))
            process, line = agent(*agent_flags(), "--cloud", f"127.0.0.1:{mqtt}", "--credentials", credentials)
            samples.append(sdk_ms([*sdk_flags(line), "--pair", "--pairing-timeout", "30"], home=home))
            stop(process)
        print(f"  {name:<24} p50 {statistics.median(samples):7.1f}   max {max(samples):7.1f}")
finally:
    cloud.terminate()
    cloud.wait(timeout=10)
PY
