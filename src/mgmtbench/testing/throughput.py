"""Server throughput against connections (after an SSH server vendor's study against OpenSSH):
the servers under test as processes, their pinning and CPU time, and one measurement.

A :class:`BulkServer` is a server process tree (the emulator's one process with its threads, or
``sshd``'s listener with a process per connection) with a :class:`~mgmtbench.targets.Target`
to reach it. :func:`emulator_server` runs ``mgmtbench serve`` on loopback in a process of its
own (never a thread of the benchmark's: pinning and CPU time must be the server's alone);
:func:`sshd_server` wraps :func:`~mgmtbench.testing.sshd.openssh_server` on loopback. Behind a
lab link each is the lab's device runtime (``netns``, ``sshd``), and a :class:`BulkServer` is
made from the lab's device and its ``device_pids``. :func:`measure` runs one concurrent transfer
with the OpenSSH bulk client (:mod:`mgmtbench.clients.openssh.bulk`) and reads every process's
CPU time around it.

CPU figures are percentages of one core over the transfer's window (a server using both cores of
a 2-core machine shows 200 %). ``other_cpu_pct`` is what the machine was busy with besides the
server, the client and the link's own process: the kernel's network processing outside those
processes (softirq) and anything else that ran meanwhile; a large value says the run shared the
machine.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mgmtbench.clients.openssh.bulk import BulkConnections, Transfer
from mgmtbench.errors import UsageError
from mgmtbench.lab import proctree
from mgmtbench.lab.procfs import PROC, TICK
from mgmtbench.lab.profiles import LinkProfile, resolve, with_name
from mgmtbench.targets import SshAlgorithms, Target
from mgmtbench.testing.credentials import PASSWORD, USERNAME
from mgmtbench.testing.sshd import openssh_server

MB = 10**6
#: The study's ciphers, by their OpenSSH names.
CIPHERS = ("aes128-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
           "chacha20-poly1305@openssh.com")
#: The MAC for a cipher that has none of its own (the AEAD ciphers carry theirs): encrypt-then-MAC
#: SHA-256, which OpenSSH and asyncssh both have in C (umac, OpenSSH's default, asyncssh lacks).
MAC = "hmac-sha2-256-etm@openssh.com"
AEAD = ("gcm@openssh.com", "chacha20-poly1305@openssh.com")
#: Key exchange is not measured (it happens before the timed part): the cheapest common one.
KEX = ("curve25519-sha256",)
SERVERS = ("emulator", "sshd")
DIRECTIONS = ("upload", "download")
PINNING = ("pinned", "unpinned")
#: The link name that means no lab: both servers on 127.0.0.1.
LOOPBACK = "loopback"


def algorithms(cipher: str) -> SshAlgorithms:
    """The client's algorithm choice for ``cipher``: it, its MAC if it needs one, :data:`KEX`."""
    aead = cipher.endswith(AEAD)
    return SshAlgorithms(kex=KEX, ciphers=(cipher,), macs=() if aead else (MAC,))


def short_cipher(cipher: str) -> str:
    """``aes128-gcm@openssh.com`` -> ``aes128-gcm``."""
    return cipher.removesuffix("@openssh.com")


def link_profile(link: str) -> LinkProfile | None:
    """The lab profile of a link name: ``local`` (the unimpaired veth), ``NNNmbit`` (0 ms at that
    rate), a profile name; None for ``loopback`` (no lab)."""
    if link == LOOPBACK:
        return None
    rate = re.fullmatch(r"(\d+(?:\.\d+)?)mbit", link)
    if rate:
        return with_name(resolve(f"rtt=0,rate={rate.group(1)}"), link)
    try:
        return resolve(link)
    except UsageError:
        raise UsageError(f"link {link!r}: use loopback, local, NNNmbit (1000mbit) or a profile "
                         "name") from None


@dataclass(frozen=True)
class ThroughputMatrix:
    """What the throughput benchmark runs: links, servers, ciphers (short names: aes128-gcm),
    directions, connection counts, pinnings, and the bytes each connection moves."""

    links: tuple[str, ...]
    servers: tuple[str, ...]
    ciphers: tuple[str, ...]
    directions: tuple[str, ...]
    connections: tuple[int, ...]
    pinning: tuple[str, ...]
    size: int

    @classmethod
    def parse(cls, *, links: Sequence[str], servers: Sequence[str], ciphers: Sequence[str],
              directions: Sequence[str], connections: Sequence[int], pinning: Sequence[str],
              mb: float) -> ThroughputMatrix:
        """The matrix, each value checked (:class:`UsageError`: one sentence on what is
        wrong); ``ciphers`` ``["all"]`` is all four, full OpenSSH names are shortened."""
        for link in links:
            try:
                link_profile(link)
            except UsageError as exc:
                raise UsageError(f"--throughput-links: {exc}") from None
        short = [short_cipher(c) for c in (CIPHERS if list(ciphers) == ["all"] else ciphers)]
        if mb <= 0:
            raise UsageError(f"--throughput-mb takes a positive size in MB, not {mb:g}")
        if not links:
            raise UsageError("--throughput-links: give at least one link")
        return cls(tuple(links), _known("servers", servers, SERVERS),
                   _known("ciphers", short, tuple(short_cipher(c) for c in CIPHERS)),
                   _known("directions", directions, DIRECTIONS), tuple(connections),
                   _known("pinning", pinning, PINNING), int(mb * MB))

    @staticmethod
    def full_name(cipher: str) -> str:
        """``aes128-gcm`` -> ``aes128-gcm@openssh.com`` (OpenSSH's name)."""
        return next(c for c in CIPHERS if short_cipher(c) == cipher)


def _known(what: str, wanted: Sequence[str], known: tuple[str, ...]) -> tuple[str, ...]:
    """``wanted`` in ``known``'s order, or a UsageError naming the unknown ones."""
    unknown = [w for w in wanted if w not in known]
    if unknown or not wanted:
        raise UsageError(f"--throughput-{what}: choose from {', '.join(known)}"
                         + (f", not {', '.join(unknown)}" if unknown else ""))
    return tuple(k for k in known if k in wanted)


@dataclass(frozen=True)
class BulkServer:
    """A server under test: ``name`` (``emulator`` or ``sshd``), how to reach it, and the roots
    of the process trees that serve it."""

    name: str
    target: Target
    pids: tuple[int, ...]

    def pin(self, cpus: set[int]) -> None:
        """Restrict every thread of the server's processes to ``cpus``; processes it starts
        later (``sshd``'s per-connection children) inherit it."""
        if not proctree.pin(self.pids, cpus):
            raise UsageError(f"{self.name}: no process to pin (has it exited?)")

    def cpus(self) -> dict[int, set[int]]:
        """The CPUs each thread of each of the server's processes may use, read back from
        ``/proc`` (thread id -> CPUs)."""
        found: dict[int, set[int]] = {}
        for root in self.pids:
            for member in proctree.tree(root):
                for thread in proctree.threads(member):
                    with contextlib.suppress(OSError, ValueError):
                        found[thread] = proctree.cpus_allowed(thread)
        return found

    def cpu_seconds(self) -> float:
        """CPU time used so far by the server's process trees (reaped children included)."""
        return trees_cpu_seconds(self.pids)

    def banner(self) -> str:
        """What the server announces (``OpenSSH_9.2p1 Debian-2+deb12u10``, ``AsyncSSH_2.24.1``)."""
        with socket.create_connection((self.target.host, self.target.ssh_port), timeout=10) as sock:
            line = sock.makefile("rb").readline(256).decode("ascii", "replace")
        return line.strip().removeprefix("SSH-2.0-")


def cpu_split(pinned: bool, cpus: set[int] | None = None) -> tuple[set[int], set[int]]:
    """(server CPUs, client CPUs). Pinned: the server gets the last CPU (the study's test 1: one
    core), the client the others, so neither takes the other's core (on a 1-CPU machine they
    share it). Unpinned: both may use every CPU."""
    every = set(cpus if cpus is not None else proctree.all_cpus())
    if not pinned:
        return every, every
    server = {max(every)}
    return server, (every - server) or every


@contextlib.contextmanager
def emulator_server(folder: Path, authorized_keys: Path, key_file: Path,
                    extra_args: Sequence[str] = ()) -> Iterator[BulkServer]:
    """``mgmtbench serve`` on a free loopback port, in its own process, public-key login for
    :data:`~mgmtbench.testing.credentials.USERNAME` with ``authorized_keys``."""
    folder.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", "0", "--https-port", "0",
            "--username", USERNAME, "--authorized-keys",
            str(authorized_keys), "--state-dir", str(folder / "state"),
            # The experiment measures ciphers, not a platform's identity: the emulator offers the
            # study's ciphers (as sshd does by default), not only its image's defaults.
            "--kex", ",".join(KEX), "--ciphers", ",".join(CIPHERS), "--macs", MAC, *extra_args]
    log = folder / "serve.log"
    with log.open("wb") as err:  # the password in the environment: not in `ps`
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=err, text=True,
                                   env={**os.environ, "MGMTBENCH_PASSWORD": PASSWORD})
    try:
        assert process.stdout is not None
        port = 0
        for line in process.stdout:
            found = re.search(r"ssh -p (\d+)", line)
            port = int(found.group(1)) if found else port
            if line.startswith("Press Ctrl-C"):
                break
        if not port:
            raise UsageError(f"mgmtbench serve did not start: {log.read_text().strip()[-300:]}")
        target = Target("127.0.0.1", port, 0, USERNAME, PASSWORD, "", known_hosts=folder /
                        "state" / "known_hosts", key_file=key_file)
        yield BulkServer("emulator", target, (process.pid,))
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


@contextlib.contextmanager
def sshd_server(folder: Path, authorized_keys: Path, key_file: Path) -> Iterator[BulkServer]:
    """A real OpenSSH ``sshd`` with the bulk sink and source on a free loopback port, logged
    into as the current user with ``key_file`` (behind a lab link: the lab's ``sshd`` device
    runtime)."""
    with openssh_server(folder, authorized_keys, {}) as device:
        config = str(folder / "sshd_config")
        listener = next((pid for pid in proctree.children(os.getpid())
                         if config in _cmdline(pid)), None)
        if listener is None:
            raise UsageError(f"sshd started but its process (with {config}) is not a child of "
                             "this one")
        target = Target(device.host, device.port, 0, device.user, "", "",
                        known_hosts=device.known_hosts, key_file=key_file)
        yield BulkServer("sshd", target, (listener,))


def _cmdline(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def busy_seconds() -> dict[int, float]:
    """CPU time each CPU has spent busy since boot (``/proc/stat``: every field but idle and
    iowait; guest time is inside user already)."""
    busy: dict[int, float] = {}
    for line in (PROC / "stat").read_text().splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        values = [int(v) for v in rest.split()[:8]]  # user nice system idle iowait irq softirq steal
        busy[int(name[3:])] = (sum(values) - values[3] - values[4]) / TICK
    return busy


@dataclass(frozen=True)
class Throughput:
    """One concurrent transfer: ``connections`` x ``size`` bytes, the client's
    :class:`~mgmtbench.clients.openssh.bulk.Transfer`, and the CPU seconds of the server, the
    link's process (0 without one) and each CPU of the machine (busy, whatever ran) over the
    same window."""

    connections: int
    size: int
    transfer: Transfer
    server_cpu_s: float
    link_cpu_s: float
    busy_s: dict[int, float]

    @property
    def machine_cpu_s(self) -> float:
        """The whole machine's busy CPU time over the window."""
        return sum(self.busy_s.values())

    def busy_pct(self, cpus: set[int]) -> float:
        """How busy ``cpus`` were over the window, in % of their capacity (100: all saturated,
        whatever ran on them): which side of a pinned run had no CPU time to spare."""
        return 100 * sum(self.busy_s.get(c, 0.0) for c in cpus) / (
            len(cpus) * self.transfer.window_s)

    @property
    def mb_per_s_total(self) -> float:
        """Every connection's bytes over the window (MB = 10^6 bytes)."""
        return self.connections * self.size / MB / self.transfer.window_s

    @property
    def per_connection(self) -> list[float]:
        """Each connection's MB/s over its own time."""
        return [self.size / MB / d for d in self.transfer.durations]

    @property
    def mb_per_s_per_connection(self) -> float:
        """The mean of the connections' own MB/s."""
        return sum(self.per_connection) / self.connections

    @property
    def mb_per_server_cpu_s(self) -> float | None:
        """Every connection's bytes per second of the server's CPU time: what one core of the
        server moves, whatever else shared the machine (None: no CPU time read)."""
        if self.server_cpu_s <= 0:
            return None
        return self.connections * self.size / MB / self.server_cpu_s

    def pct(self, cpu_s: float) -> float:
        """``cpu_s`` as a percentage of one core over the window."""
        return 100 * cpu_s / self.transfer.window_s

    @property
    def other_cpu_s(self) -> float:
        """The machine's busy time not spent in the server, client or link processes."""
        return max(0.0, self.machine_cpu_s - self.server_cpu_s - self.transfer.client_cpu_s
                   - self.link_cpu_s)


def measure(server: BulkServer, bulk: BulkConnections, connections: int, direction: str,
            size: int, data: Path | None = None, link_pids: Sequence[int] = ()) -> Throughput:
    """One transfer of ``size`` bytes on each of ``connections`` connections of ``bulk`` at
    once, with the server's, the link processes' and the machine's CPU time around it. The
    server's second reading waits (up to 2 s) until its process trees are back to the processes
    they had before (``sshd``'s per-transfer ``cat``/``head`` exited and reaped), so each
    process's time is counted exactly once (:mod:`mgmtbench.lab.proctree`)."""
    members = _members(server)
    before = (server.cpu_seconds(), trees_cpu_seconds(link_pids), busy_seconds())
    transfer = bulk.transfer(connections, direction, size, data)
    busy = busy_seconds()
    _settle(server, members)
    after = (server.cpu_seconds(), trees_cpu_seconds(link_pids))
    return Throughput(connections, size, transfer, after[0] - before[0], after[1] - before[1],
                      {cpu: busy[cpu] - before[2].get(cpu, 0.0) for cpu in busy})


def trees_cpu_seconds(pids: Sequence[int]) -> float:
    """CPU time used so far by the process trees rooted at ``pids`` (reaped children
    included)."""
    return sum(proctree.tree_cpu_seconds(pid) for pid in pids)


def _members(server: BulkServer) -> set[int]:
    return {member for root in server.pids for member in proctree.tree(root)}


def _settle(server: BulkServer, members: set[int], timeout: float = 2.0) -> None:
    """Wait until the server's trees hold no process that ``members`` (a reading from before)
    did not, and none of theirs is a zombie."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = _members(server)
        if now <= members and not any(_zombie(pid) for pid in now):
            return
        time.sleep(0.01)


def _zombie(pid: int) -> bool:
    try:
        return (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def tcp_upload(address: str, port: int, size: int, timeout: float = 120) -> float:
    """Send ``size`` bytes to a lab's echo server sink (``sink N``) over one TCP connection and
    wait for its ``ok``: the link's own ceiling without SSH; the seconds it took."""
    chunk = bytes(1 << 20)
    start = time.perf_counter()
    with socket.create_connection((address, port), timeout=timeout) as sock:
        sock.sendall(f"sink {size}\n".encode())
        left = size
        while left > 0:
            sock.sendall(chunk if left >= len(chunk) else chunk[:left])
            left -= len(chunk)
        if sock.recv(16) != b"ok\n":
            raise UsageError(f"the echo server at {address}:{port} did not take {size} bytes")
    return time.perf_counter() - start
