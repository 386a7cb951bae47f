"""One version for the release: the three executables and the cloud's GET /status report the same."""
import json
import os
import re
import subprocess

from conftest import BIN, CLOUD_BIN


def version_of(executable):
    output = subprocess.run([executable, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?", output), f"{executable} --version printed {output!r}"
    return output


def test_every_executable_and_the_cloud_report_one_version(cloud):
    versions = {
        "tether": version_of(os.path.join(BIN, "tether")),
        "tether-agent": version_of(os.path.join(BIN, "tether-agent")),
        "tether-cloud": version_of(os.path.join(CLOUD_BIN, "tether-cloud")),
    }
    app = cloud.admin("app", "create", "--name", "versions")
    status = json.loads(cloud.request("GET", "/status", headers={"X-Gizwits-Application-Id": app["appId"]}))
    versions["GET /status"] = status["status"]["version"]
    assert len(set(versions.values())) == 1, versions
