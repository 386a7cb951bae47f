"""The cloud's SMTP sender against a real SMTP server (aiosmtpd) with STARTTLS and AUTH PLAIN."""
import base64
import email
import json
import os
import ssl
import subprocess
import tempfile
import time

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from conftest import CLOUD_BIN, ROOT, Cloud, free_port, wait_for_port

TLS = os.path.join(ROOT, "Tests", "Fixtures", "tls")


class Inbox:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.mail_from, envelope.rcpt_tos, envelope.content, session.authenticated))
        return "250 OK"


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == b"mailer" and auth_data.password == b"s3cret"
    return AuthResult(success=ok)


@pytest.fixture
def smtp_server():
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(os.path.join(TLS, "server.pem"), os.path.join(TLS, "server.key"))
    inbox = Inbox()
    port = free_port()
    controller = Controller(
        inbox, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
        authenticator=authenticate, auth_require_tls=True,
    )
    controller.start()
    try:
        yield port, inbox
    finally:
        controller.stop()


def start_cloud(directory, smtp_url):
    port = free_port()
    process = subprocess.Popen(
        [
            os.path.join(CLOUD_BIN, "tether-cloud"), "serve", "--metrics-bind", "none", "--http-port", str(port), "--no-gateway",
            "--database", f"sqlite:{directory}/cloud.sqlite",
            "--smtp-url", smtp_url, "--mail-from", "cloud@example.org",
            "--smtp-ca-file", os.path.join(TLS, "ca.pem"),
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wait_for_port(port)
    return Cloud(directory, port, process, None)


def stop(cloud):
    cloud.process.terminate()
    assert cloud.process.wait(timeout=10) == 0


def test_confirmation_mail_goes_through_smtp_with_starttls_and_auth(smtp_server):
    smtp_port, inbox = smtp_server
    with tempfile.TemporaryDirectory() as directory:
        cloud = start_cloud(directory, f"smtp://mailer:s3cret@127.0.0.1:{smtp_port}?starttls=require")
        try:
            app = cloud.admin("app", "create", "--name", "mail")
            cloud.request("POST", "/app/users", {"email": "ivy@example.org", "password": "Passw0rd!"}, {"X-Gizwits-Application-Id": app["appId"]})
            deadline = time.time() + 10
            while not inbox.messages and time.time() < deadline:
                time.sleep(0.05)
            assert len(inbox.messages) == 1
            mail_from, recipients, content, authenticated = inbox.messages[0]
            assert mail_from == "cloud@example.org"
            assert recipients == ["ivy@example.org"]
            assert authenticated
            message = email.message_from_bytes(content)
            body = message.get_payload(decode=True).decode()
            assert "/app/users/confirm_email?token=" in body
            # Sent, so not kept in the outbox.
            assert cloud.admin("outbox") == []
        finally:
            stop(cloud)


def test_mail_that_cannot_be_sent_is_kept_in_the_outbox():
    closed_port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        cloud = start_cloud(directory, f"smtp://mailer:s3cret@127.0.0.1:{closed_port}?starttls=require")
        try:
            app = cloud.admin("app", "create", "--name", "mail")
            answer = json.loads(cloud.request("POST", "/app/users", {"email": "jo@example.org", "password": "Passw0rd!"}, {"X-Gizwits-Application-Id": app["appId"]}))
            assert "token" in answer
            outbox = cloud.admin("outbox")
            assert [entry["recipient"] for entry in outbox] == ["jo@example.org"]
            assert "confirm_email?token=" in outbox[0]["body"]
        finally:
            stop(cloud)
