"""What every independent test peripheral needs to be a BlueZ GATT server with dbus-fast: the
service, characteristic and advertisement objects of BlueZ's peripheral API, and their
registration with GattManager1 and LEAdvertisingManager1 on an adapter."""

from dbus_fast import PropertyAccess, Variant
from dbus_fast.service import ServiceInterface, dbus_property, method

BASE = "-0000-1000-8000-00805f9b34fb"


def uuid16(short):
    return "0000%04x%s" % (short, BASE)


class Advertisement(ServiceInterface):
    """org.bluez.LEAdvertisement1: service UUIDs, service data, manufacturer data by company, name."""

    def __init__(self, local_name, service_uuids=(), service_data=None, manufacturer_data=None):
        super().__init__("org.bluez.LEAdvertisement1")
        self.local_name = local_name
        self.service_uuids = list(service_uuids)
        self.service_data = service_data or {}
        self.manufacturer_data = manufacturer_data or {}

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return self.service_uuids

    @dbus_property(access=PropertyAccess.READ)
    def ServiceData(self) -> "a{sv}":
        return {uuid: Variant("ay", data) for uuid, data in self.service_data.items()}

    @dbus_property(access=PropertyAccess.READ)
    def ManufacturerData(self) -> "a{qv}":
        return {company: Variant("ay", data) for company, data in self.manufacturer_data.items()}

    @dbus_property(access=PropertyAccess.READ)
    def Discoverable(self) -> "b":
        # General discoverable: without it BlueZ (and bluezoo) advertise only while the adapter is.
        return True

    @dbus_property(access=PropertyAccess.READ)
    def LocalName(self) -> "s":
        return self.local_name

    @method()
    def Release(self):
        pass


class Service(ServiceInterface):
    def __init__(self, uuid):
        super().__init__("org.bluez.GattService1")
        self.uuid = uuid

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.uuid

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True


class Characteristic(ServiceInterface):
    """A characteristic: reads answer `on_read()` (or the last value), writes go to `on_write`,
    and `on_subscribe` runs when a central turns notifications on."""

    def __init__(self, uuid, service_path, flags, mtu=512, value=b"", on_read=None, on_write=None, on_subscribe=None):
        super().__init__("org.bluez.GattCharacteristic1")
        self.uuid = uuid
        self.service_path = service_path
        self.flags = flags
        self.mtu = mtu
        self.value = value
        self.on_read = on_read
        self.on_write = on_write
        self.on_subscribe = on_subscribe
        self.notifying = False

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return self.service_path

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags

    @dbus_property(access=PropertyAccess.READ)
    def MTU(self) -> "q":
        return self.mtu

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        return self.on_read() if self.on_read else self.value

    @method()
    def WriteValue(self, value: "ay", options: "a{sv}"):
        if self.on_write:
            self.on_write(bytes(value))

    @method()
    def StartNotify(self):
        self.notifying = True
        if self.on_subscribe:
            self.on_subscribe()

    @method()
    def StopNotify(self):
        self.notifying = False

    @method()
    def Confirm(self):
        # bluezoo calls it after each notification.
        pass

    def notify(self, value):
        if not self.notifying:
            return
        self.value = value
        self.emit_properties_changed({"Value": value})


async def register(bus, adapter, root, advertisement_path):
    """Registers the GATT application exported under `root` and the advertisement with BlueZ."""
    adapter_path = "/org/bluez/" + adapter
    introspection = await bus.introspect("org.bluez", adapter_path)
    proxy = bus.get_proxy_object("org.bluez", adapter_path, introspection)
    await proxy.get_interface("org.bluez.GattManager1").call_register_application(root, {})
    await proxy.get_interface("org.bluez.LEAdvertisingManager1").call_register_advertisement(advertisement_path, {})
