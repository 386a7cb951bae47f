"""The device agent's UDP side against traffic no friendly client sends."""
import json
import os
import socket
import struct
import subprocess

import pytest

from conftest import BIN, ROOT, free_port

DISCOVERY = bytes.fromhex("0000000303000003")


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def spoofed_udp(source_port, destination_port, payload):
    """A UDP datagram from 127.0.0.1:source_port, built by hand (needs a raw socket: root)."""
    length = 8 + len(payload)
    pseudo = socket.inet_aton("127.0.0.1") * 2 + struct.pack("!BBH", 0, socket.IPPROTO_UDP, length)
    header = struct.pack("!HHHH", source_port, destination_port, length, 0)
    return struct.pack("!HHHH", source_port, destination_port, length, checksum(pseudo + header + payload)) + payload


@pytest.mark.skipif(os.geteuid() != 0, reason="a spoofed source port needs a raw socket (root)")
def test_agent_keeps_answering_after_a_request_from_port_zero():
    udp_port, tcp_port = free_port(), free_port()
    agent = subprocess.Popen(
        [os.path.join(BIN, "tether-agent"), "simulate", "--product", os.path.join(ROOT, "products", "pet-house.json"),
         "--bind", "127.0.0.1", "--udp-port", str(udp_port), "--tcp-port", str(tcp_port), "--json", "--interval", "0", "--announce", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        did = json.loads(agent.stdout.readline())["did"]
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
        raw.sendto(spoofed_udp(0, udp_port, DISCOVERY), ("127.0.0.1", 0))
        raw.close()
        client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        client.settimeout(2)
        for _ in range(3):
            client.sendto(DISCOVERY, ("127.0.0.1", udp_port))
            try:
                answer, _ = client.recvfrom(512)
                break
            except socket.timeout:
                continue
        else:
            pytest.fail("the agent stopped answering discovery")
        assert did.encode() in answer
    finally:
        agent.terminate()
        agent.wait(timeout=10)
