"""The cloud against the real PyPI client pygizwits (see gizwits-openapi.md §5)."""
import asyncio
import json
import os
import sys

import aiohttp
import pytest

from conftest import ROOT


def import_client():
    try:
        from pyGizwits import GizwitsClient
    except ImportError:
        # pygizwits 0.0.3 imports a name its module lacks; the submodules that did load stay
        # in sys.modules, so add the name and retry (the reference's workaround).
        sys.modules["pyGizwits.pyGizwits"].GizwitsDeviceNotBound = sys.modules["pyGizwits.Exceptions"].GizwitsDeviceNotBound
        from pyGizwits import GizwitsClient
    return GizwitsClient


def test_pygizwits_logs_in_and_lists_bindings(cloud):
    app = cloud.admin("app", "create", "--name", "pygizwits")
    # GAgent's unsigned registration form, which a product must be opened to.
    product = cloud.admin("product", "create", "--name", "Pet house", "--datapoints", os.path.join(ROOT, "products", "pet-house.json"), "--unsigned-registration")
    headers = {"X-Gizwits-Application-Id": app["appId"]}
    cloud.request("POST", "/app/users", {"username": "pyuser", "password": "Passw0rd!"}, headers)
    session = json.loads(cloud.request("POST", "/app/login", {"username": "pyuser", "password": "Passw0rd!"}, headers))

    # 21 devices: pygizwits fetches a second page when exactly 20 come back.
    dids = []
    for index in range(21):
        answer = cloud.request("POST", "/dev/devices", {"mac": f"0000000000{index:02x}", "product_key": product["productKey"], "passcode": "PASSCODEAB"}, form=True)
        assert answer.startswith("did=")
        dids.append(answer[4:])
    bound = json.loads(cloud.request(
        "POST", "/app/bindings",
        {"devices": [{"did": did, "passcode": "PASSCODEAB", "dev_alias": f"pet {i}"} for i, did in enumerate(dids)]},
        {**headers, "X-Gizwits-User-token": session["token"]},
    ))
    assert sorted(bound["success"]) == sorted(dids)

    GizwitsClient = import_client()

    async def scenario():
        async with aiohttp.ClientSession() as http:
            client = GizwitsClient(http, app["appId"])
            client.base_url = cloud.base_url
            await client.login("pyuser", "Passw0rd!")
            assert client.expires_at > 0
            await client.refresh_bindings()
            assert sorted(client.bindings) == sorted(dids)
            device = client.bindings[dids[3]]
            assert device.alias == "pet 3"
            assert device.product_name == "Pet house"
            reports = await client.fetch_devices()
            assert sorted(reports) == sorted(dids)
            # No report yet: updated_at 0, which pygizwits reads as "no data".
            assert reports[dids[0]].status is None

    asyncio.run(scenario())


def test_pygizwits_maps_our_error_codes(cloud):
    app = cloud.admin("app", "create", "--name", "errors")
    cloud.request("POST", "/app/users", {"username": "erruser", "password": "Passw0rd!"}, {"X-Gizwits-Application-Id": app["appId"]})
    GizwitsClient = import_client()
    from pyGizwits.Exceptions import GizwitsIncorrectPasswordException, GizwitsTokenInvalidException

    async def scenario():
        async with aiohttp.ClientSession() as http:
            client = GizwitsClient(http, app["appId"])
            client.base_url = cloud.base_url
            with pytest.raises(GizwitsIncorrectPasswordException):
                await client.login("erruser", "Wrong000!")
            client.token = "0" * 32
            with pytest.raises(Exception) as raised:
                await client.refresh_bindings()
            # pygizwits wraps what _get raised; the cause is the token error our 9004 maps to.
            assert isinstance(raised.value.__context__, GizwitsTokenInvalidException)

    asyncio.run(scenario())
