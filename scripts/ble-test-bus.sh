#!/usr/bin/env bash
# A Bluetooth LE test bus: a private dbus-daemon with bluezoo (a mock of BlueZ's D-Bus API) on it,
# two adapters hci0 (central side) and hci1 (peripheral side) that see each other over a
# simulated radio. Never the machine's own buses or controllers.
#   eval "$(scripts/ble-test-bus.sh start DIR PYTHON)"   -> exports DBUS_SYSTEM_BUS_ADDRESS
#   scripts/ble-test-bus.sh stop DIR
# PYTHON is the interpreter of a virtual environment with bluezoo==1.0.2 (Tests/Interop/requirements.txt);
# its copy of bluezoo is patched here, idempotently, where 1.0.2 differs from BlueZ.
set -euo pipefail

command=$1
directory=$2
central_address=00:11:22:33:44:01
peripheral_address=00:11:22:33:44:02

# bluezoo 1.0.2 (pinned) differs from BlueZ in ways a correct central trips over:
#  1. ManufacturerData is declared a{sv}; BlueZ and every client use a{qv} (any advertisement with
#     manufacturer data fails to export without this);
#  2. a second Connect after a Disconnect fails (the GATT objects of the first link stay exported): drop them
#     on disconnect; Connect on a connected device returns at once, as in BlueZ;
#  3. each StartNotify adds one more relay, so notifications arrive twice after a repeated StartNotify;
#  4. Device1.Disconnect called by the peripheral (on its adapter's object for the central) never reaches
#     the central's side: carry it over;
#  5. a device already known from an earlier scan never shows up in a later one (nothing changes, so no
#     PropertiesChanged): refresh ManufacturerData on every advertising report, as BlueZ does (DuplicateData).
_ble_patch_bluezoo() {
  "$python" - <<'PY'
import pathlib, re, bluezoo
root = pathlib.Path(bluezoo.__file__).parent
mfr = re.compile(r"property_signature='a\{sv\}'(,\s*flags=[^\n]*\n\s*def (?:ScanResponse)?ManufacturerData\()")
edits = {
    "device.py": [
        ("        if self.manufacturer_data != device.manufacturer_data:\n"
         "            await self.ManufacturerData.set_async(device.manufacturer_data)\n",
         "        # tether: every advertising report refreshes it (BlueZ's DuplicateData default)\n"
         "        await self.ManufacturerData.set_async(device.manufacturer_data)\n"),
        ("    async def connect(self, uuid: Optional[str] = None) -> None:\n",
         "    async def connect(self, uuid: Optional[str] = None) -> None:\n"
         "        if self.connected and self.services:  # tether: already connected, as in BlueZ\n"
         "            return\n"),
        ("        await self.peer.Connected.set_async(False)\n        await self.Connected.set_async(False)\n",
         "        await self.peer.Connected.set_async(False)\n        await self.Connected.set_async(False)\n"
         "        # tether: drop this link's GATT objects so that a later Connect can export fresh ones\n"
         "        for link in reversed(list(self.services.values())):\n"
         "            sub = getattr(link, 'client_props_changed_subscription', None)\n"
         "            if sub is not None:\n"
         "                sub.unsubscribe()\n"
         "            self.peer_adapter.mock.remove_object(link)\n"
         "        if self.services:\n"
         "            self.services = {}\n"
         "            await self.ServicesResolved.set_async(False)\n"
         "        # tether: a disconnect from either side ends the link on both\n"
         "        mirror = self.peer_adapter.devices.get('%s/dev_%s' % (\n"
         "            self.peer_adapter.get_object_path(), self.adapter.address.replace(':', '_')))\n"
         "        if mirror is not None and mirror is not self and mirror.connected:\n"
         "            await mirror.disconnect()\n"),
    ],
    "gatt/characteristic.py": [
        ("        if acquired is None and not self.client.Notifying.get():\n",
         "        if acquired is None and self.client_props_changed_subscription.subscriber is not None:\n"
         "            return  # tether: already relaying this characteristic\n"
         "        if acquired is None and not self.client.Notifying.get():\n"),
        ("            self.client_props_changed_subscription = events.subscribe(\n"
         "                f\"properties:changed:{id(self.client)}\", on_properties_changed)\n",
         "            self.client_props_changed_subscription = events.Subscription(events.subscribe(\n"
         "                f\"properties:changed:{id(self.client)}\", on_properties_changed))\n"),
    ],
}
for name in ("interfaces/Device.py", "interfaces/LEAdvertisement.py", *edits):
    f = root / name
    src = f.read_text()
    new = src
    if name.startswith("interfaces/"):
        new = mfr.sub(r"property_signature='a{qv}'\1", new)
        assert not mfr.search(new), name
    else:
        for old, rep in edits[name]:
            if rep not in new:
                assert new.count(old) == 1, (name, old)
                new = new.replace(old, rep)
    if new != src:
        f.write_text(new)
        # an edit may keep the size and land in the second pip wrote the file: the old bytecode would look fresh
        for pyc in (f.parent / "__pycache__").glob(f.stem + ".*.pyc"):
            pyc.unlink()
PY
}


wait_adapters() {  # wait_adapters SECONDS -> 0 once hci0 and hci1 are on the bus and powered
  "$python" - "$1" <<'PY'
import asyncio, sys, time
from dbus_fast import BusType
from dbus_fast.aio import MessageBus
async def up():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    try:
        for hci in ("hci0", "hci1"):
            intro = await bus.introspect("org.bluez", "/org/bluez/" + hci)
            props = bus.get_proxy_object("org.bluez", "/org/bluez/" + hci, intro).get_interface("org.freedesktop.DBus.Properties")
            if not (await props.call_get("org.bluez.Adapter1", "Powered")).value:
                return False
        return True
    finally:
        bus.disconnect()
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    try:
        if asyncio.run(asyncio.wait_for(up(), 2)):
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.3)
sys.exit(1)
PY
}

case "$command" in
start)
    python=$3
    command -v dbus-daemon >/dev/null || { echo "dbus-daemon is not installed (apt-get install dbus)" >&2; exit 1; }
    [ -f /usr/share/dbus-1/session.conf ] || { echo "/usr/share/dbus-1/session.conf is missing (apt-get install dbus)" >&2; exit 1; }
    _ble_patch_bluezoo >&2 || { echo "could not patch bluezoo in $python's environment" >&2; exit 1; }
    rm -rf "$directory"
    mkdir -p "$directory"
    dbus-daemon --config-file=/usr/share/dbus-1/session.conf --address="unix:path=$directory/bus.sock" --nofork --nopidfile \
        >"$directory/dbus.log" 2>&1 &
    echo $! >"$directory/dbus.pid"
    for _ in $(seq 1 100); do [ -S "$directory/bus.sock" ] && break; sleep 0.1; done
    [ -S "$directory/bus.sock" ] || { echo "dbus-daemon did not start: $(tail -3 "$directory/dbus.log")" >&2; exit 1; }
    export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$directory/bus.sock"
    "$(dirname "$python")/bluezoo" ${TETHER_BLUEZOO_VERBOSE:+-vv} --auto-enable --scan-interval 1 -a "$central_address" -a "$peripheral_address" \
        >"$directory/bluezoo.log" 2>&1 &
    echo $! >"$directory/bluezoo.pid"
    if ! wait_adapters 20; then
        echo "bluezoo did not bring up hci0 and hci1 within 20 s: $(tail -3 "$directory/bluezoo.log")" >&2
        "$0" stop "$directory"
        exit 1
    fi
    echo "export DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SYSTEM_BUS_ADDRESS"
    ;;
stop)
    for name in bluezoo dbus; do
        if [ -f "$directory/$name.pid" ]; then
            kill "$(cat "$directory/$name.pid")" 2>/dev/null || true
            rm -f "$directory/$name.pid"
        fi
    done
    ;;
*)
    echo "usage: $0 start DIR PYTHON | stop DIR" >&2
    exit 2
    ;;
esac
