"""schemathesis against the cloud's own OpenAPI document on a live server: no server error (5xx),
no answer that breaks the schema, a bounded number of examples."""
import json
import os
import subprocess
import sys


def test_schemathesis_finds_no_server_error_and_no_schema_violation(cloud, tmp_path):
    app = cloud.admin("app", "create", "--name", "schemathesis")
    headers = {"X-Gizwits-Application-Id": app["appId"]}
    session = json.loads(cloud.request("POST", "/app/users", {"username": "fuzzer", "password": "Passw0rd!"}, headers))
    schemathesis = os.path.join(os.path.dirname(sys.executable), "schemathesis")
    run = subprocess.run(
        [
            schemathesis, "run", f"{cloud.base_url}/openapi.json",
            "--checks", "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance",
            # Logging out would end the session every other operation is fuzzed with.
            "--exclude-path", "/app/logout",
            "--max-examples", "15", "--max-time", "45", "--seed", "20261122",
            "--header", f"X-Gizwits-Application-Id: {app['appId']}",
            "--header", f"X-Gizwits-User-token: {session['token']}",
            "--report", "junit", "--report-dir", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=180,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "passed" in run.stdout
    assert cloud.process.poll() is None, "the cloud died under schemathesis"
