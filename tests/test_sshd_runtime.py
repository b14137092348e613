"""The sshd device runtime for real: OpenSSH sshd per device in a lab's namespace, behind a
regional (30 ms) link, reached by asyncssh, paramiko and the OpenSSH client.

What is held: every client's exec modes get the oracle's output through the link, with password
login (the lab's user, which this machine does not have) and with the lab's keys; exec answers
match the emulator's for known commands, batches and unknown first words; the lab records the
runtime and the server's version and measures the profile's RTT; HTTPS and PTY modes are refused
in one sentence each; and nothing of the lab's sshd outlives the lab: on exit (with a session
open) and after a SIGKILL of its owner, once the next run cleans up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import paramiko
import pytest

from mgmtbench.clients import adapter
from mgmtbench.emulator import Credentials
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.emulator.device.transcripts import load_platform
from mgmtbench.emulator.options import SshServerOptions
from mgmtbench.emulator.oracle import expected_output, same_output, show_commands
from mgmtbench.errors import AuthenticationFailed, UsageError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.cleanup import clean_stale
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.netns import lab_namespaces
from mgmtbench.lab.runtimes import RuntimeOptions
from mgmtbench.lab.runtimes.sshd import SshdRuntime
from mgmtbench.targets import Auth, Login, Service, lab_targets
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, ClientKeys
from tests.clients_support import available, drive

REASON = SshdRuntime.unavailable() or ("" if has_net_admin() else "labs need root")
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "-")

PLATFORM = "cisco_ios"
EXEC_MODES = ("fresh-conn", "reuse-conn", "batch-exec", "pipelined")


@pytest.fixture(scope="module")
def credentials(client_keys: ClientKeys) -> Credentials:
    return Credentials(username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                       authorized_keys=client_keys.authorized_keys)


@pytest.fixture(scope="module")
def lab(credentials: Credentials) -> Iterator[Lab]:
    with Lab(resolve("regional"), runtime="sshd", devices=2, credentials=credentials,
             calibration_samples=10) as made:
        yield made


def emulator_answer(lab: Lab, command: str, index: int = 0) -> tuple[str, int]:
    """What the emulator prints for an exec request, and its exit status."""
    device = lab.devices[index]
    platform = load_platform(PLATFORM)
    facts = DeviceFacts.for_hostname(device.hostname, mgmt_ip=device.address,
                                     form=platform.style.identity.facts)
    session = CliSession(Device(platform, facts, enable_secret="-"),
                         mode=Mode.PRIV)
    replies = [session.execute(line) for line in command.split("\n")]
    return "".join(r.output for r in replies), 0 if all(r.ok for r in replies) else 1


def run_exec(lab: Lab, command: str, index: int = 0) -> tuple[str, str, int]:
    """One asyncssh exec request: stdout, stderr and exit status."""
    device = lab.devices[index]

    async def go() -> tuple[str, str, int]:
        async with asyncssh.connect(device.address, username=USERNAME, password=PASSWORD,
                                    known_hosts=str(lab.known_hosts), client_keys=None) as conn:
            result = await conn.run(command)
            return str(result.stdout), str(result.stderr), int(result.exit_status or 0)

    return asyncio.run(go())


# --- clients through the link ----------------------------------------------------------------


@pytest.mark.parametrize("mode", EXEC_MODES)
@pytest.mark.parametrize("client", ["asyncssh", "paramiko", "openssh"])
def test_clients_get_the_oracles_output(lab: Lab, login: Login, client: str, mode: str) -> None:
    cls = available(client)
    if mode not in cls.modes:
        pytest.skip(f"{client} has no mode {mode}")
    commands = show_commands(PLATFORM, 5)
    for index, target in enumerate(lab_targets(lab, login, platform=PLATFORM)):
        device = lab.devices[index]
        want = expected_output(PLATFORM, device.hostname, device.address, commands)
        assert same_output(PLATFORM, drive(cls(target, mode), commands), want)


def test_key_login(lab: Lab, login: Login) -> None:
    """The lab's authorized_keys let a key-only client in (the OpenSSH client always uses keys)."""
    target = lab_targets(lab, Login(USERNAME, "wrong", SECRET, key_file=login.key_file,
                                    auth=Auth.KEY))[0]
    want = expected_output(PLATFORM, lab.devices[0].hostname, lab.devices[0].address,
                           ["show version"])
    assert same_output(PLATFORM, drive(available("asyncssh")(target, "fresh-conn"),
                                       ["show version"]), want)


def test_wrong_password_is_refused(lab: Lab) -> None:
    target = lab_targets(lab, Login(USERNAME, "not-the-password", SECRET))[0]
    with pytest.raises(AuthenticationFailed):
        drive(available("paramiko")(target, "fresh-conn"), ["show version"])


def test_only_the_labs_user_logs_in(lab: Lab, client_keys: ClientKeys) -> None:
    client = paramiko.SSHClient()
    client.load_host_keys(str(lab.known_hosts))
    with pytest.raises(paramiko.AuthenticationException):
        client.connect(lab.devices[0].address, username="root", key_filename=str(
            client_keys.private), look_for_keys=False, allow_agent=False, timeout=10)
    client.close()


def test_the_labs_user_is_not_an_account_here(lab: Lab) -> None:
    with pytest.raises(KeyError):
        pwd.getpwnam(USERNAME)
    assert f"\n{USERNAME}:" not in "\n" + Path("/etc/passwd").read_text()


# --- exec answers, compared with the emulator ------------------------------------------------


@pytest.mark.parametrize("command", [
    "show version",
    "show clock\nshow ip arp\nshow inventory",
    "show   ip  interface\tbrief\r\nshow running-config",
    "bogus",
    "   bogus words",
    "show version\nbogus\nshow clock",
    "\n\nshow clock\n",
], ids=["one", "batch", "spacing", "unknown", "unknown-indented", "batch-unknown", "blank-lines"])
def test_exec_answers_as_the_emulator(lab: Lab, command: str) -> None:
    for index in range(len(lab.devices)):
        out, err, status = run_exec(lab, command, index)
        want, want_status = emulator_answer(lab, command, index)
        assert status == want_status
        assert same_output(PLATFORM, out, want), (out, want)  # the clock moves in between
        assert err == ""


def test_bulk_sink_and_source(lab: Lab) -> None:
    out, _, status = run_exec(lab, "head -c 100000 /dev/zero")
    assert (len(out), set(out), status) == (100_000, {"\0"}, 0)
    _, err, status = run_exec(lab, f"head -c {2 ** 31} /dev/zero")
    assert status == 1
    assert "limit" in err


def test_a_shell_is_refused(lab: Lab) -> None:
    device = lab.devices[0]

    async def go() -> tuple[str, int | None]:
        async with asyncssh.connect(device.address, username=USERNAME, password=PASSWORD,
                                    known_hosts=str(lab.known_hosts), client_keys=None) as conn:
            result = await conn.run(term_type="vt100")  # a PTY and a shell, no command
            return str(result.stdout), result.exit_status

    out, status = asyncio.run(go())
    assert status == 1
    assert "exec requests only" in out


# --- what the lab records and refuses --------------------------------------------------------


def test_facts_and_rtt(lab: Lab) -> None:
    facts = lab.facts()
    assert (facts.runtime, facts.devices) == ("sshd", 2)
    assert facts.image is not None
    assert facts.image.startswith("OpenSSH_")
    assert facts.as_dict()["image"] == facts.image
    assert facts.measured_rtt_ms is not None
    assert 30 <= facts.measured_rtt_ms < 33
    # An SSH round trip on a warm connection (a channel open and its confirmation, an exec and
    # its output) costs what the link's RTT says, never less.
    device = lab.devices[0]

    async def warm_exec_seconds() -> float:
        async with asyncssh.connect(device.address, username=USERNAME, password=PASSWORD,
                                    known_hosts=str(lab.known_hosts), client_keys=None) as conn:
            await conn.run("show clock")
            start = time.perf_counter()
            await conn.run("show clock")
            return time.perf_counter() - start

    assert asyncio.run(warm_exec_seconds()) * 1000 >= 2 * 30


def test_device_pids_are_the_servers(lab: Lab) -> None:
    pids = lab.device_pids()
    assert len(pids) == len(lab.devices)
    assert all(Path(f"/proc/{pid}/comm").read_text().strip() == "sshd" for pid in pids)


@pytest.mark.parametrize(("client", "mode", "service"), [
    ("httpx", "keep-alive", Service.HTTPS),
    ("asyncssh", "pty-fresh", Service.SSH_SHELL),
    ("paramiko", "pty-reuse", Service.SSH_SHELL),
    ("asyncssh", "batch-exec", Service.SSH_EXEC),
])
def test_unsupported_modes_say_why(lab: Lab, client: str, mode: str, service: Service) -> None:
    assert adapter(client).service(mode) is service
    reason = lab.unsupported(service)
    if service is Service.SSH_EXEC:
        assert reason is None
        return
    assert reason is not None
    assert reason.startswith("device runtime sshd")
    assert "\n" not in reason


def test_options_it_cannot_honour() -> None:
    with pytest.raises(UsageError, match="emulator processes"):
        SshdRuntime.from_options(RuntimeOptions(processes=2))
    with pytest.raises(UsageError, match="keyboard-interactive"):
        Lab(resolve("local"), runtime="sshd",
            ssh=SshServerOptions(auth_methods=("keyboard-interactive",))).up()
    with pytest.raises(UsageError, match="is an account of this machine"):
        Lab(resolve("local"), runtime="sshd", credentials=Credentials(username="root")).up()


# --- nothing left behind ----------------------------------------------------------------------


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid in /proc/{pid}/status")


def wait_gone(pids: list[int], netns: str | None = None) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids) and netns not in lab_namespaces():
            return
        time.sleep(0.1)
    raise AssertionError(f"left behind: pids={[p for p in pids if alive(p)]} "
                         f"netns={netns in lab_namespaces()}")


def open_sink(address: str, known_hosts: Path) -> tuple[paramiko.SSHClient, paramiko.Channel]:
    """A connection whose session waits in ``cat > /dev/null`` (a running command), and its
    channel: keep it, or paramiko closes the channel (and the command ends) once it is
    garbage."""
    client = paramiko.SSHClient()
    client.load_host_keys(str(known_hosts))
    client.connect(address, username=USERNAME, password=PASSWORD, look_for_keys=False,
                   allow_agent=False, timeout=10)
    stdin, _, _ = client.exec_command("cat > /dev/null")
    return client, stdin.channel


def sessions_started(listeners: list[int], count: int) -> list[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        every = [p for listener in listeners for p in tree(listener)]
        if len(every) >= count:
            return every
        time.sleep(0.05)
    raise AssertionError("the session's processes did not start")


def test_exit_with_a_session_open_leaves_nothing(credentials: Credentials) -> None:
    with Lab(resolve("campus"), runtime="sshd", credentials=credentials,
             calibration_samples=3) as lab:
        assert lab.state is not None
        netns, launcher = lab.state.netns, lab.state.pids[-1]
        client, _channel = open_sink(lab.devices[0].address, lab.known_hosts)
        # The listener, its privileged child and the user's process at least (the command, and
        # short-lived helpers of the session, may come and go between snapshots).
        processes = sessions_started(lab.device_pids(), 3)
        everything = tree(launcher)
        # Every process still there now was there during the second snapshot, so it must be in it.
        still = {pid for pid in processes if Path(f"/proc/{pid}").exists()}
        assert len(still) >= 3
        assert still <= set(everything)
        # The user's side of the session runs as the lab's uid, not as root.
        uids = set()
        for pid in still:
            with contextlib.suppress(OSError):  # a short-lived helper that ended meanwhile
                uids.add(uid(pid))
        assert uids - {0}
    try:
        wait_gone(everything, netns)
    finally:
        client.close()


CHILD = """
import sys, time
from mgmtbench.emulator import Credentials
from mgmtbench.lab import Lab, resolve
creds = Credentials(username=sys.argv[1], password=sys.argv[2])
with Lab(resolve("campus"), runtime="sshd", credentials=creds, calibration_samples=3) as lab:
    print(lab.state.netns, lab.devices[0].address, lab.known_hosts, *lab.device_pids(),
          flush=True)
    time.sleep(120)
"""


def test_after_sigkill_the_next_run_cleans_up() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, USERNAME, PASSWORD],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline().split()
    assert line, child.stderr.read() if child.stderr else "no output"
    netns, address, known_hosts, listeners = line[0], line[1], Path(line[2]), list(
        map(int, line[3:]))
    client, _channel = open_sink(address, known_hosts)
    try:
        processes = sessions_started(listeners, 4)
        os.kill(child.pid, signal.SIGKILL)
        child.communicate(timeout=10)
        time.sleep(0.5)
        assert netns in lab_namespaces()  # the owner is gone, its lab is not
        removed = clean_stale()
        assert netns.removeprefix("mgmtbench-") in removed
        wait_gone(processes, netns)
    finally:
        client.close()
