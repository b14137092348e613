"""Each platform introduces itself as its real image does, seen by real clients on real sockets:
SSH version string, algorithm lists and host key type (the server's KEXINIT as sent, OpenSSH's
``ssh -v``, asyncssh), the login banner, TLS versions, the ASA's User-Agent rule, the bytes
that erase the --More-- prompt, and transcripts that real parsers (ntc-templates) read.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import socket
import ssl
import struct
import subprocess
from collections.abc import Callable

import asyncssh
import pytest

from mgmtbench.clients import ClientError, Transport, pairs
from mgmtbench.emulator import EmulatorOptions, EmulatorThread, load_platform
from mgmtbench.emulator.command import options_from_args, register
from mgmtbench.emulator.options import Algorithms
from mgmtbench.emulator.oracle import stable_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.emulator.yang.datastore import platform_families
from mgmtbench.errors import UsageError
from mgmtbench.targets import Login
from mgmtbench.testing import PASSWORD, USERNAME, ClientKeys
from mgmtbench.testing.fixtures import emulator_target
from mgmtbench.testing.shell import PROMPT, Shell, https_client, ssh_connect
from tests.clients_support import available, drive

FreshEmulator = Callable[..., EmulatorThread]
PLATFORMS = ("cisco_ios", "cisco_asa")
#: The same order as the name-lists of SSH_MSG_KEXINIT (RFC 4253 7.1).
LISTS = ("kex", "host_key_algs", "ciphers", "ciphers_sc", "macs", "macs_sc")


def server_hello(endpoint: DeviceEndpoint) -> tuple[str, dict[str, list[str]]]:
    """The server's identification line and the name-lists of its KEXINIT, read off the wire
    (both are sent in the clear before any key exchange)."""
    with socket.create_connection((endpoint.host, endpoint.ssh_port), timeout=10) as sock:
        sock.sendall(b"SSH-2.0-probe\r\n")
        data = b""
        while b"\r\n" not in data:
            data += sock.recv(4096)
        ident, data = data.split(b"\r\n", 1)
        while len(data) < 5 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            data += sock.recv(65536)
    length, padding = struct.unpack(">IB", data[:5])
    payload = data[5:4 + length - padding]
    assert payload[0] == 20  # SSH_MSG_KEXINIT
    position = 1 + 16  # message number and cookie
    lists: dict[str, list[str]] = {}
    for name in LISTS:
        (size,) = struct.unpack(">I", payload[position:position + 4])
        lists[name] = payload[position + 4:position + 4 + size].decode().split(",")
        position += 4 + size
    return ident.decode(), lists


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_server_offers_the_platforms_ssh_identity(
        platform: str, emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for(platform).endpoints[0]
    ssh = load_platform(platform).style.identity.ssh
    ident, lists = server_hello(endpoint)
    assert ident == "SSH-2.0-Cisco-1.25"
    assert ssh.kex is not None
    assert ssh.ciphers is not None
    assert ssh.macs is not None
    # asyncssh adds its strict-kex and ext-info markers to the kex list: the rest as configured.
    assert [k for k in lists["kex"] if "@openssh.com" not in k and not k.startswith("ext-info")
            and k != "kex-strict-s-v00@openssh.com"] == list(ssh.kex)
    assert lists["ciphers"] == lists["ciphers_sc"] == list(ssh.ciphers)
    assert lists["macs"] == lists["macs_sc"] == list(ssh.macs)
    assert lists["host_key_algs"] == list(ssh.host_key_algs or ())
    assert "curve25519-sha256" not in lists["kex"]
    assert "chacha20-poly1305@openssh.com" not in lists["ciphers"]


def test_the_options_still_choose_the_algorithms(fresh_emulator: FreshEmulator) -> None:
    """--kex/--host-key override the platform's (the algorithm matrix relies on it); a list left
    open stays the platform's."""
    emu = fresh_emulator("cisco_ios", algorithms=Algorithms(kex=("curve25519-sha256",)),
                         host_key_type="ed25519")
    _, lists = server_hello(emu.endpoints[0])
    assert lists["kex"][0] == "curve25519-sha256"
    assert "ecdh-sha2-nistp256" not in lists["kex"]
    assert lists["host_key_algs"] == ["ssh-ed25519"]
    assert lists["ciphers"] == list(load_platform("cisco_ios").style.identity.ssh.ciphers or ())


@pytest.mark.openssh
@pytest.mark.parametrize("platform", PLATFORMS)
def test_openssh_sees_a_cisco_server_with_an_rsa_host_key(
        platform: str, emulator_for: Callable[[str], EmulatorThread],
        client_keys: ClientKeys) -> None:
    emu = emulator_for(platform)
    endpoint = emu.endpoints[0]
    result = subprocess.run(
        ["ssh", "-v", "-F", "/dev/null", "-p", str(endpoint.ssh_port), "-i",
         str(client_keys.private), "-o", f"UserKnownHostsFile={emu.emulator.known_hosts}",
         "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
         f"{USERNAME}@{endpoint.host}", "show clock"],
        capture_output=True, timeout=20, check=False)
    log = result.stderr.decode(errors="replace")
    assert result.returncode == 0, log
    assert "remote software version Cisco-1.25" in log
    ssh = load_platform(platform).style.identity.ssh
    kex = re.search(r"kex: algorithm: (\S+)", log)
    assert kex is not None
    assert kex.group(1) in (ssh.kex or ())
    assert re.search(r"kex: host key algorithm: rsa-sha2-(256|512)", log), log
    cipher = re.search(r"kex: server->client cipher: (\S+) MAC: (\S+)", log)
    assert cipher is not None
    assert cipher.group(1) in (ssh.ciphers or ())
    assert re.search(r"Server host key: ssh-rsa SHA256:", log)
    print(f"\n{platform}: kex {kex.group(1)}, cipher {cipher.group(1)}, MAC {cipher.group(2)}")


class _BannerClient(asyncssh.SSHClient):
    def __init__(self) -> None:
        self.banners: list[str] = []

    def auth_banner_received(self, msg: str, lang: str) -> None:
        self.banners.append(msg)


@pytest.mark.parametrize(("platform", "banner"), [
    ("cisco_ios", "Authorized access only. All activity is monitored and logged.\n"),
    ("cisco_asa", None)])
def test_the_login_banner_comes_before_the_password(
        platform: str, banner: str | None,
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    """IOS sends its `banner login` in SSH_MSG_USERAUTH_BANNER; the ASA's config has none."""
    endpoint = emulator_for(platform).endpoints[0]
    assert endpoint.ssh_port
    port = endpoint.ssh_port
    client = _BannerClient()

    async def login() -> list[str]:
        conn, _ = await asyncssh.create_connection(
            lambda: client, endpoint.host, port, username=USERNAME,
            password=PASSWORD, known_hosts=None, client_keys=None)
        async with conn:
            await conn.run("show clock")
        return client.banners

    assert asyncio.run(login()) == ([banner] if banner else [])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tls_versions_are_the_platforms(platform: str,
                                        emulator_for: Callable[[str], EmulatorThread]) -> None:
    emu = emulator_for(platform)
    endpoint = emu.endpoints[0]
    assert emu.emulator.tls is not None
    assert load_platform(platform).style.identity.https.tls_versions == ("TLSv1.2",)

    def handshake(context: ssl.SSLContext) -> str:
        with socket.create_connection((endpoint.host, endpoint.https_port)) as sock, \
                context.wrap_socket(sock, server_hostname=endpoint.host) as tls:
            return str(tls.version())

    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    assert handshake(context) == "TLSv1.2"  # the client offers 1.3 too: the device picks 1.2
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    with pytest.raises(ssl.SSLError):
        handshake(context)


def test_tls_versions_can_be_chosen(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", tls_versions=("TLSv1.3",), ssh=False)
    with https_client(emu) as client:
        response = client.get(f"https://{emu.endpoints[0].host}:{emu.endpoints[0].https_port}"
                              "/admin/exec/show+clock", headers={"User-Agent": "ASDM/ Java"})
        assert response.status_code == 200
        stream = response.extensions["network_stream"]
        assert stream.get_extra_info("ssl_object").version() == "TLSv1.3"


@pytest.mark.parametrize(("platform", "rule", "agent", "status"), [
    ("cisco_asa", "device", None, 403),
    ("cisco_asa", "device", "python-httpx/0.28", 403),
    ("cisco_asa", "device", "ASDM/ Java/1.8.0_131", 200),
    ("cisco_asa", "any", None, 200),
    ("cisco_ios", "device", None, 200),  # IOS has no such rule
])
def test_the_asa_user_agent_rule(platform: str, rule: str, agent: str | None, status: int,
                                 fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(platform, user_agent_rule=rule, ssh=False)
    endpoint = emu.endpoints[0]
    with https_client(emu) as client:
        client.headers.pop("User-Agent", None)
        headers = {"User-Agent": agent} if agent else {}
        response = client.get(f"https://{endpoint.host}:{endpoint.https_port}"
                              "/admin/exec/show+version", headers=headers)
    assert response.status_code == status, response.text
    if status == 200:
        assert "Software" in response.text


@pytest.mark.parametrize(("platform", "more", "erase"), [
    ("cisco_ios", b" --More-- ", b"\b" * 9 + b" " * 8 + b"\b" * 9),
    ("cisco_asa", b"<--- More --->", b"\r" + b" " * 14 + b"\r")])
def test_the_more_prompt_is_erased_as_the_device_does(
        platform: str, more: bytes, erase: bytes,
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for(platform).endpoints[0]

    async def page() -> bytes:
        async with ssh_connect(endpoint) as conn:
            shell = await Shell.open(conn)
            shell.write(b"show bulk-output 3200\r")  # 50 lines: over one page of 24
            await shell.read_until(more)
            shell.write(b" ")
            after = await shell.read_until(more)
            shell.write(b"q")
            await shell.read_until(PROMPT)
            return after

    after = asyncio.run(page())
    # The erase, then the next line written over where the prompt was.
    assert after.startswith(erase + b"00000023 mgmtbench bulk")


def test_ntc_templates_parse_the_asa_show_interface(
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    """The Management block as real ASAs print it (no software input queue line)."""
    from ntc_templates.parse import parse_output

    endpoint = emulator_for("cisco_asa").endpoints[0]

    async def show() -> str:
        async with ssh_connect(endpoint) as conn:
            result = await conn.run("show interface", check=True)
            return str(result.stdout)

    parsed = parse_output(platform="cisco_asa", command="show interface", data=asyncio.run(show()))
    by_name = {row["interface"]: row for row in parsed}
    assert by_name["Management1/1"]["ip_address"] == endpoint.device.facts.mgmt_ip
    assert by_name["GigabitEthernet1/1"]["mac_address"] == endpoint.device.facts.mac
    assert all(row["mac_address"].startswith("00a7.42") for row in parsed
               if not row["interface"].startswith("Internal-"))


@pytest.mark.parametrize(("platform", "site", "oui"), [("cisco_ios", "FDO", "6c8b.d3"),
                                                       ("cisco_asa", "JAD", "00a7.42")])
def test_serials_and_macs_have_cisco_forms(platform: str, site: str, oui: str,
                                           fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(platform, devices=3, https=False)
    serials = set()
    for endpoint in emu.endpoints:
        facts = endpoint.device.facts
        # Site code, year (since 1996) 21-27 (2017-2023), week 01-52, four characters.
        found = re.fullmatch(rf"{site}(\d\d)(\d\d)[0-9A-Z]{{4}}", facts.serial)
        assert found is not None, facts.serial
        assert 21 <= int(found.group(1)) <= 27
        assert 1 <= int(found.group(2)) <= 52
        assert re.fullmatch(rf"{re.escape(oui)}[0-9a-f]{{2}}\.[0-9a-f]{{4}}", facts.mac)
        text = "".join(endpoint.device.transcript(words)
                       for words in endpoint.device.platform.transcripts)
        assert facts.serial in text
        assert "5254." not in text  # no QEMU MAC addresses (52:54:00)
        serials.add(facts.serial)
    assert len(serials) == 3


def test_asp_drop_reasons_are_the_asas_own(emulator_for: Callable[[str], EmulatorThread]) -> None:
    """Every reason is "Description (keyword)" from the ASA's list; flow drops word acl-drop as
    flow drops do."""
    text = emulator_for("cisco_asa").endpoints[0].device.transcript(("show", "asp", "drop"))
    flow = text[text.index("Flow drop:"):]
    assert "Flow is denied by access rule (acl-drop)" in flow
    for invented in ("tcp-option-invalid", "need-tcp-intercept", "inspect-dns-max-msg-len"):
        assert invented not in text
    rows = [line for line in text.splitlines() if line.startswith("  ")]
    assert rows
    assert all(re.fullmatch(r"  .+ \([\w-]+\) +\d+", row) for row in rows)
    assert {len(row) for row in rows} == {80}  # the count right-aligned at column 80


# --- every client adapter connects to each platform's own defaults ------------------------------

FIRST_MODES: dict[str, str] = {}
for _client, _mode in pairs(same_process=True):
    FIRST_MODES.setdefault(_client, _mode)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", sorted(FIRST_MODES))
def test_every_client_connects_to_the_platforms_defaults(
        client: str, platform: str, emulator_for: Callable[[str], EmulatorThread],
        fresh_emulator: FreshEmulator, login: Login) -> None:
    """The SSH clients negotiate the real image's algorithms and RSA host key; the HTTPS ones
    send ASDM's User-Agent, so the ASA's rule (when enforced) lets them in."""
    cls = available(client)
    emu = (fresh_emulator(platform, user_agent_rule="device") if client.startswith("httpx")
           else emulator_for(platform))
    target = emulator_target(emu, login)
    if cls.transport is Transport.NETCONF and platform_families(load_platform(platform)) is None:
        # No YANG models, no NETCONF (an ASA, as the real image): the subsystem is refused.
        with pytest.raises(ClientError):
            drive(cls(target, FIRST_MODES[client]), ["show version"])
        return
    if cls.transport is Transport.GNMI and platform_families(load_platform(platform)) is None:
        # No YANG models, no gNMI server (an ASA): the target has no gNMI port to try.
        assert target.gnmi_port == 0
        with pytest.raises(UsageError, match="no gNMI port"):
            cls(target, FIRST_MODES[client])
        return
    output = drive(cls(target, FIRST_MODES[client]), ["show version"])
    assert load_platform(platform).style.identity.ssh.version  # the identity is in use
    # The uptime line moves while the client connects: compared in its stable form.
    want = stable_output(platform, emu.endpoints[0].device.transcript(("show", "version")))
    assert want in stable_output(platform, output)


def test_serve_flags_choose_tls_versions_and_the_agent_rule() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    default = options_from_args(parser.parse_args(["serve"]))
    assert (default.tls_versions, default.user_agent_rule, default.host_key_type) == (
        (), "any", None)  # the platform's TLS versions and host key; every agent accepted
    chosen = options_from_args(parser.parse_args(
        ["serve", "--tls-versions", "TLSv1.2,TLSv1.3", "--user-agent-rule", "device",
         "--host-key", "ed25519"]))
    assert chosen.tls_versions == ("TLSv1.2", "TLSv1.3")
    assert chosen.user_agent_rule == "device"
    assert chosen.ssh_server.flags()["--host-key"] == "ed25519"
    with pytest.raises(UsageError, match=r"unknown TLS version 'TLSv1\.0'.*TLSv1\.2, TLSv1\.3"):
        EmulatorThread(EmulatorOptions(tls_versions=("TLSv1.0",))).start()
