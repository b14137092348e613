"""The emulator's SSH server, driven by asyncssh as a client over real sockets."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

import asyncssh
import pytest

from mgmtbench.emulator import EmulatorThread, Limits
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.options import Algorithms
from mgmtbench.emulator.oracle import same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import SECRET, USERNAME, ClientKeys
from mgmtbench.testing.shell import PROMPT, Shell, ssh_connect

FreshEmulator = Callable[..., EmulatorThread]


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


# --- authentication ------------------------------------------------------------------------------


@pytest.mark.parametrize(("user", "password"), [(USERNAME, "wrong"), ("nobody", "s3cret-pw")])
def test_bad_credentials_are_refused(ios: DeviceEndpoint, user: str, password: str,
                                     caplog: pytest.LogCaptureFixture) -> None:
    async def attempt() -> None:
        async with ssh_connect(ios, username=user, password=password, client_keys=None):
            pass

    with caplog.at_level(logging.INFO, logger="mgmtbench"), pytest.raises(
            asyncssh.PermissionDenied):
        run(attempt())
    lines = [r for r in caplog.records if r.name.startswith("mgmtbench")]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "bad password" in lines[0].getMessage()


def test_public_key_login(ios: DeviceEndpoint, client_keys: ClientKeys) -> None:
    async def login() -> str:
        async with ssh_connect(ios, password=None, client_keys=[str(client_keys.private)]) as conn:
            result = await conn.run("show clock", check=True)
            return str(result.stdout)

    assert same_output("cisco_ios", str(run(login())), ios.device.transcript(("show", "clock")))


def test_unknown_public_key_is_refused(ios: DeviceEndpoint) -> None:
    stranger = asyncssh.generate_private_key("ssh-ed25519")

    async def login() -> None:
        async with ssh_connect(ios, password=None, client_keys=[stranger]):
            pass

    with pytest.raises(asyncssh.PermissionDenied):
        run(login())


# --- exec requests -------------------------------------------------------------------------------


def test_exec_runs_commands_in_order(endpoint: DeviceEndpoint) -> None:
    async def go() -> asyncssh.SSHCompletedProcess:
        async with ssh_connect(endpoint) as conn:
            return await conn.run(f"show version\n{other}\nsh ver")

    other = endpoint.device.platform.style.show_commands[2]  # one without a clock in it
    result = run(go())
    version = endpoint.device.transcript(("show", "version"))
    assert isinstance(result, asyncssh.SSHCompletedProcess)
    assert result.exit_status == 0
    assert same_output(endpoint.device.platform.name, str(result.stdout),
                       version + endpoint.device.transcript(tuple(other.split())) + version)


def test_exec_exit_status_reports_a_failed_command(endpoint: DeviceEndpoint) -> None:
    async def go() -> asyncssh.SSHCompletedProcess:
        async with ssh_connect(endpoint) as conn:
            return await conn.run("show clock\nshow nonsense\n")

    result = run(go())
    assert isinstance(result, asyncssh.SSHCompletedProcess)
    assert result.exit_status == 1
    # The platform's own error (IOS: "% Invalid input detected at '^' marker.").
    error = CliSession(endpoint.device, mode=Mode.PRIV, user=USERNAME).execute("show nonsense")
    assert not error.ok
    assert error.text() in str(result.stdout)


def test_exec_stops_at_exit(ios: DeviceEndpoint) -> None:
    async def go() -> str:
        async with ssh_connect(ios) as conn:
            return str((await conn.run("show clock\nexit\nshow version")).stdout)

    assert same_output("cisco_ios", str(run(go())), ios.device.transcript(("show", "clock")))


def test_many_concurrent_sessions(fresh_emulator: FreshEmulator) -> None:
    # 50 logins at once from one address: beyond OpenSSH's MaxStartups 10:30:100 and the
    # per-source limit (as against a real sshd), so this device allows that many.
    ios = fresh_emulator(limits=Limits(max_startups=(50, 30, 100),
                                       max_startups_per_source=50)).endpoints[0]
    expected = ios.device.transcript(("show", "version"))

    async def one() -> str:
        async with ssh_connect(ios) as conn:
            return str((await conn.run("show version")).stdout)

    async def many() -> list[str]:
        return await asyncio.gather(*(one() for _ in range(50)))

    outputs = run(many())
    assert isinstance(outputs, list)
    assert all(same_output("cisco_ios", out, expected) for out in outputs)
    assert len(outputs) == 50


def test_session_limit_refuses_politely_and_recovers(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(limits=Limits(max_sessions=2)).endpoints[0]

    async def scenario() -> None:
        async with ssh_connect(endpoint) as first, ssh_connect(endpoint):
            with pytest.raises((asyncssh.DisconnectError, ConnectionError)):
                async with ssh_connect(endpoint):
                    pass
            assert (await first.run("show clock")).exit_status == 0
        await asyncio.sleep(0.2)
        async with ssh_connect(endpoint) as again:
            assert (await again.run("show clock")).exit_status == 0

    run(scenario())


def test_abrupt_disconnect_mid_output(ios: DeviceEndpoint) -> None:
    async def scenario() -> str:
        async with ssh_connect(ios) as conn:
            process = await conn.create_process("show bulk-output 50000000", encoding=None)
            assert await process.stdout.read(65536)
            conn.abort()
        async with ssh_connect(ios) as conn:
            shell = await Shell.open(conn)
            shell.write(b"show bulk-output 50000000\r")
            await shell.read_until(b"mgmtbench bulk")
            conn.abort()
        async with ssh_connect(ios) as conn:
            return str((await conn.run("show clock")).stdout)

    assert same_output("cisco_ios", str(run(scenario())), ios.device.transcript(("show", "clock")))


@pytest.mark.parametrize(("key_type", "algorithm"), [
    ("rsa", "rsa-sha2-256"), ("ecdsa", "ecdsa-sha2-nistp256"), ("ed25519", "ssh-ed25519")])
def test_host_key_types(fresh_emulator: FreshEmulator, key_type: str, algorithm: str) -> None:
    emu = fresh_emulator(host_key_type=key_type)
    endpoint = emu.endpoints[0]

    async def go() -> str:
        async with ssh_connect(endpoint, known_hosts=str(emu.emulator.known_hosts),
                               server_host_key_algs=[algorithm]) as conn:
            return str((await conn.run("show clock")).stdout)

    assert same_output(endpoint.device.platform.name, str(run(go())),
                       endpoint.device.transcript(("show", "clock")))


def test_algorithm_lists_are_configurable(fresh_emulator: FreshEmulator) -> None:
    algorithms = Algorithms(kex=("diffie-hellman-group14-sha256",), ciphers=("aes128-ctr",),
                            macs=("hmac-sha2-256",))
    endpoint = fresh_emulator(algorithms=algorithms).endpoints[0]

    async def go() -> tuple[object, ...]:
        async with ssh_connect(endpoint) as conn:
            return (conn.get_extra_info("send_cipher"), conn.get_extra_info("send_mac"))

    assert run(go()) == ("aes128-ctr", "hmac-sha2-256")

    async def refused() -> None:
        async with ssh_connect(endpoint, encryption_algs=["aes256-gcm@openssh.com"]):
            pass

    # Which of the two a refused key exchange gives is a race, not a property of the device:
    # the server refuses and closes; if its close (an RST, the client's KEXINIT still unread)
    # arrives before the client has parsed the server's KEXINIT, the client sees the connection
    # lost rather than its own key-exchange failure. Either way no cipher was agreed; the server
    # still answers the configured client afterwards.
    with pytest.raises((asyncssh.KeyExchangeFailed, asyncssh.ConnectionLost)):
        run(refused())
    assert run(go()) == ("aes128-ctr", "hmac-sha2-256")


def test_processing_delay_is_added_per_command(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(processing_delay=0.2).endpoints[0]

    async def go() -> float:
        async with ssh_connect(endpoint) as conn:
            start = asyncio.get_running_loop().time()
            await conn.run("show clock\nshow clock\nshow clock")
            return asyncio.get_running_loop().time() - start

    elapsed = run(go())
    assert isinstance(elapsed, float)
    assert elapsed >= 0.6  # at least three delays; an upper bound would be a timing test


# --- the interactive shell -----------------------------------------------------------------------


def ends_with(seen: bytes, tail: bytes) -> bool:
    """``seen`` ends with ``tail``, the device's running clock masked (:mod:`.oracle`)."""
    return same_output("cisco_ios", seen[-len(tail):], tail)


def shell_session(endpoint: DeviceEndpoint, script: Callable[[Shell], object]) -> object:
    async def go() -> object:
        async with ssh_connect(endpoint) as conn:
            shell = await Shell.open(conn)
            return await script(shell)  # type: ignore[misc]

    return run(go())


def test_shell_prompt_echo_and_line_endings(ios: DeviceEndpoint) -> None:
    clock = ios.device.transcript(("show", "clock")).replace("\n", "\r\n").encode()

    async def script(shell: Shell) -> None:
        for ending in (b"\r", b"\n", b"\r\n"):
            shell.write(b"show clock" + ending)
            seen = await shell.read_until(PROMPT)
            assert same_output("cisco_ios", seen, b"show clock\r\n" + clock + b"R1#")
        shell.write(b"\r\n\r\nshow clock\r")  # two empty lines: two prompts, no more
        assert await shell.read_until(b"\r\nR1#") == b"\r\nR1#"
        assert await shell.read_until(b"\r\nR1#") == b"\r\nR1#"
        assert await shell.read_until(b"show clock\r\n") == b"show clock\r\n"

    shell_session(ios, script)


def test_shell_editing_keys(ios: DeviceEndpoint) -> None:
    clock = ios.device.transcript(("show", "clock")).replace("\n", "\r\n").encode()

    async def script(shell: Shell) -> None:
        shell.write(b"show clocx\x7fk\r")  # backspace
        assert ends_with(await shell.read_until(PROMPT), clock + b"R1#")
        shell.write(b"junk junk\x15show clock\r")  # Ctrl-U erases the line
        assert ends_with(await shell.read_until(PROMPT), clock + b"R1#")
        shell.write(b"show cl\x1b[A\x1b[Dock\r")  # arrow keys are ignored
        assert ends_with(await shell.read_until(PROMPT), clock + b"R1#")
        shell.write(b"show ver\x03")  # Ctrl-C drops the line
        assert await shell.read_until(PROMPT) == b"show ver^C\r\nR1#"

    shell_session(ios, script)


def test_shell_survives_binary_garbage(ios: DeviceEndpoint) -> None:
    clock = ios.device.transcript(("show", "clock")).replace("\n", "\r\n").encode()

    async def script(shell: Shell) -> None:
        shell.write(bytes(range(256)) * 4 + b"\xff\xfe\x00\x1b[99;99H\r")
        await shell.read_until(PROMPT)
        assert same_output("cisco_ios", await shell.command("show clock"), clock)

    shell_session(ios, script)


def test_shell_errors_and_overlong_lines(ios: DeviceEndpoint) -> None:
    async def script(shell: Shell) -> None:
        assert b"% Invalid input detected" in await shell.command("show nonsense")
        shell.write(b"show " + b"x" * 5000 + b"\r")  # echo stops at the line limit (4096)
        assert b"% Invalid input detected" in await shell.read_until(PROMPT)
        assert b"Ambiguous command" in await shell.command("sh i")
        assert b"R1#" in await shell.command("show clock") + b"R1#"

    shell_session(ios, script)


@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_asa"])
def test_shell_enable_and_config_modes(platform: str,
                                       fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(platform, login_privilege=1).endpoints[0]
    host = endpoint.hostname.encode()

    async def script(shell: Shell) -> None:
        shell.write(b"enable\r")
        await shell.read_until(b"Password: ")
        shell.write(b"wrong\r")
        denied = await shell.read_until(PROMPT)
        assert b"wrong" not in denied  # the secret is not echoed
        assert denied.rstrip().endswith(host + b">")
        await shell.enable(SECRET)
        shell.write(b"configure terminal\r")
        assert (await shell.read_until(PROMPT)).rstrip().endswith(host + b"(config)#")
        shell.write(b"interface Loopback7\r")
        assert (await shell.read_until(PROMPT)).rstrip().endswith(host + b"(config-if)#")
        shell.write(b"\x1a")  # Ctrl-Z leaves configuration mode
        assert (await shell.read_until(PROMPT)).rstrip().endswith(host + b"#")
        shell.write(b"conf t\rhostname NEWNAME\r")
        assert (await shell.read_until(re.compile(rb"NEWNAME\(config\)# ?$")))
        shell.write(b"end\r")
        await shell.read_until(re.compile(rb"NEWNAME# ?$"))
        shell.write(b"logout\r")
        await shell.process.wait_closed()
        assert shell.process.exit_status == 0

    shell_session(endpoint, script)


def test_shell_pages_long_output(ios: DeviceEndpoint) -> None:
    async def script(shell: Shell) -> None:
        shell.write(b"show bulk-output 6400\r")  # 100 lines of 64 bytes
        first = await shell.read_until(b" --More-- ")
        assert first.count(b"mgmtbench bulk") == 23  # terminal length 24: 23 lines, then --More--
        shell.write(b" ")  # space: the next page
        second = await shell.read_until(b" --More-- ")
        assert second.count(b"mgmtbench bulk") == 23
        shell.write(b"\r")  # return: one more line
        third = await shell.read_until(b" --More-- ")
        assert third.count(b"mgmtbench bulk") == 1
        shell.write(b"q")  # anything else stops the output
        rest = await shell.read_until(PROMPT)
        assert b"mgmtbench bulk" not in rest
        await shell.command("terminal length 0")
        assert (await shell.command("show bulk-output 6400")).count(b"\r\n") == 100

    shell_session(ios, script)


# --- the login privilege level -------------------------------------------------------------------


@pytest.mark.parametrize(("platform", "level", "lands"), [
    ("cisco_ios", None, b"#"), ("cisco_asa", None, b">"),  # the platforms' own levels
    ("cisco_ios", 1, b">"), ("cisco_ios", 15, b"#"), ("cisco_asa", 1, b">"),
    ("cisco_asa", 15, b"#")])
def test_a_shell_lands_at_the_login_privilege(platform: str, level: int | None, lands: bytes,
                                              fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(platform, login_privilege=level).endpoints[0]
    host = endpoint.hostname.encode()

    async def go() -> tuple[bytes, bytes, bytes]:
        async with ssh_connect(endpoint) as conn:
            process = await conn.create_process(term_type="vt100", encoding=None)
            shell = Shell(process)
            first = await shell.read_until(PROMPT)
            in_shell = await shell.command("show privilege")
            exec_result = await conn.run("show privilege", encoding=None)
            assert isinstance(exec_result.stdout, bytes)
            return first, in_shell, exec_result.stdout

    first, in_shell, over_exec = asyncio.run(go())
    assert first.rstrip().endswith(host + lands)
    shown = b"15" if lands == b"#" else b"1"
    assert in_shell == b"Current privilege level is %s\r\n" % shown
    assert over_exec == b"Current privilege level is 15\n"  # exec runs privileged at any level


def test_a_shell_at_privilege_15_needs_no_enable(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator("cisco_asa", login_privilege=15).endpoints[0]

    async def script(shell: Shell) -> None:
        shell.write(b"enable\r")  # already privileged: no password prompt, the prompt again
        assert (await shell.read_until(PROMPT)).rstrip().endswith(b"asa1#")

    shell_session(endpoint, script)


# --- subsystems ----------------------------------------------------------------------------------


@pytest.mark.parametrize("subsystem", ["netconf", "no-such-subsystem"])
def test_a_subsystem_the_device_lacks_is_refused_at_once(asa: DeviceEndpoint,
                                                         subsystem: str) -> None:
    """An ASA has no NETCONF: a ``netconf`` request fails at once, as OpenSSH refuses a
    subsystem it has no ``Subsystem`` line for, instead of opening the CLI for a client that
    waits for a hello; the connection goes on."""
    async def go() -> tuple[float, str]:
        async with ssh_connect(asa) as conn:
            start = loop.time()
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.open_session(subsystem=subsystem, encoding=None)
            refused_in = loop.time() - start
            return refused_in, str((await conn.run("show clock")).stdout)

    loop = asyncio.new_event_loop()
    refused_in, after = loop.run_until_complete(go())
    loop.close()
    assert refused_in < 2
    assert "UTC" in after or ":" in after


def test_netconf_is_served_where_the_platform_has_it(ios: DeviceEndpoint) -> None:
    async def go() -> bytes:
        async with ssh_connect(ios) as conn:
            writer, reader, _ = await conn.open_session(subsystem="netconf", encoding=None)
            hello = await asyncio.wait_for(reader.readuntil(b"]]>]]>"), 10)
            writer.close()
            return bytes(hello)

    assert b"urn:ietf:params:netconf:base:1.0" in run(go())  # type: ignore[operator]
