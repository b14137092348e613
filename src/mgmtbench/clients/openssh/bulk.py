"""Concurrent bulk transfers with the OpenSSH client: the load generator of the server throughput
experiment (``benchmarks/test_server_throughput.py``).

One ``ssh`` ControlMaster per connection (``ssh -M -S <socket> -N``, started and logged in
before anything is timed), then per transfer one ``ssh -S <socket>`` multiplexing client per
connection, all started at once, each running one exec request on its connection: the sink
``cat > /dev/null`` fed from a file (upload) or the source ``head -c N /dev/zero`` read into
``/dev/null`` (download). The multiplexing client hands its stdin/stdout to the master (file
descriptor passing), so the data moves between the file and the master's connection without
passing through another process; what is timed per connection is a channel open, the exec
request, the data and the exit status, not the TCP connection, key exchange or login.

Why OpenSSH and a process per connection: C, with OpenSSL's AES-NI/AVX2 ciphers, one process
(and so up to one core) per connection, as the standard fast client; a Python client holding
every connection in one process would be bounded by its own core long before a server is.
The masters' CPU time (and the multiplexing clients') is measured, so a run shows when the
client side was busy too.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from mgmtbench.errors import ClientError, UsageError
from mgmtbench.lab import proctree
from mgmtbench.targets import Target

#: The exec request of the sink: the server reads until EOF, discards, exits 0.
SINK = "cat > /dev/null"
CONNECT_TIMEOUT = 30  # seconds: one master's connection and login
TRANSFER_TIMEOUT = 900  # seconds: one transfer (20 x 500 MB at a few MB/s would exceed it)
#: At most this many masters log in at once: sshd drops unauthenticated connections beyond
#: MaxStartups (10 by default).
CONNECT_BATCH = 8


def source(size: int) -> str:
    """The exec request of the source: the server writes ``size`` zero bytes, exits 0."""
    return f"head -c {size} /dev/zero"


def ssh_argv(target: Target, *options: str) -> list[str]:
    """``ssh`` for ``target`` with public-key login, strict host keys, the target's algorithm
    choices and ``options``, up to the destination (the command comes after)."""
    if target.key_file is None:
        raise UsageError("the OpenSSH bulk client logs in with a key: the target has no key_file")
    if target.known_hosts is None:
        raise UsageError("the OpenSSH bulk client checks host keys: the target has no known_hosts")
    algorithms = []
    for keyword, names in (("KexAlgorithms", target.algorithms.kex),
                           ("Ciphers", target.algorithms.ciphers),
                           ("MACs", target.algorithms.macs),
                           ("HostKeyAlgorithms", target.algorithms.host_key)):
        if names:
            algorithms += ["-o", f"{keyword}={','.join(names)}"]
    return ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-i", str(target.key_file), "-o", f"UserKnownHostsFile={target.known_hosts}",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes",
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT}", "-o", "LogLevel=ERROR",
            "-o", "Compression=no", *algorithms, "-p", str(target.ssh_port),
            "-l", target.username, *options, target.host]


@dataclass(frozen=True)
class Transfer:
    """One concurrent transfer: each connection's time (seconds, in connection order), the
    window from the first start to the last exit, and the client side's CPU time over it
    (masters and multiplexing clients, user + system)."""

    durations: tuple[float, ...]
    window_s: float
    client_cpu_s: float


class BulkConnections:
    """``connections`` logged-in OpenSSH connections to ``target``, ready for transfers.

    ``with BulkConnections(target, 20) as bulk: bulk.transfer(5, "upload", size, path)``
    transfers on the first 5. :meth:`pin` restricts the masters to some CPUs.
    """

    def __init__(self, target: Target, connections: int) -> None:
        if shutil.which("ssh") is None:
            raise UsageError("the bulk transfer client needs the ssh binary: install "
                             "openssh-client")
        if connections < 1:
            raise UsageError(f"at least one connection, not {connections}")
        self.target = target
        self.connections = connections
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._masters: list[subprocess.Popen[bytes]] = []
        self._sockets: list[Path] = []

    # --- lifetime ---------------------------------------------------------------------------

    def __enter__(self) -> BulkConnections:
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def open(self) -> BulkConnections:
        """Start and log in every master, a batch at a time (a failure closes those started)."""
        self._dir = tempfile.TemporaryDirectory(prefix="mgmtbench-bulk-")
        folder = Path(self._dir.name)
        try:
            for first in range(0, self.connections, CONNECT_BATCH):
                batch = range(first, min(first + CONNECT_BATCH, self.connections))
                started = [self._start_master(folder, index) for index in batch]
                for index, master in zip(batch, started, strict=True):
                    self._wait_master(folder, index, master)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop every master (SIGTERM, then SIGKILL after 10 s) and remove the sockets."""
        for master in self._masters:
            if master.poll() is None:
                master.terminate()
        for master in self._masters:
            try:
                master.wait(timeout=10)
            except subprocess.TimeoutExpired:
                master.kill()
                master.wait()
        self._masters.clear()
        self._sockets.clear()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def _start_master(self, folder: Path, index: int) -> subprocess.Popen[bytes]:
        sock = folder / f"master-{index}"
        self._sockets.append(sock)
        with (folder / f"master-{index}.log").open("wb") as log:
            master = subprocess.Popen(
                ssh_argv(self.target, "-M", "-S", str(sock), "-o", "ControlPersist=no", "-N"),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        self._masters.append(master)
        return master

    def _wait_master(self, folder: Path, index: int, master: subprocess.Popen[bytes]) -> None:
        sock = self._sockets[index]
        deadline = time.monotonic() + CONNECT_TIMEOUT + 5
        while time.monotonic() < deadline:
            if master.poll() is not None:
                raise ClientError(f"openssh: connection {index + 1} of {self.connections} to "
                                  f"{self.target.host}:{self.target.ssh_port} failed: "
                                  f"{_last_line(folder / f'master-{index}.log')}")
            if sock.exists() and self._check(sock):
                return
            time.sleep(0.02)
        raise ClientError(f"openssh: connection {index + 1} to {self.target.host}:"
                          f"{self.target.ssh_port} not up within {CONNECT_TIMEOUT + 5} s")

    def _check(self, sock: Path) -> bool:
        done = subprocess.run(self._mux(sock, "-O", "check"), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=CONNECT_TIMEOUT, check=False)
        return done.returncode == 0

    def _mux(self, sock: Path, *options: str) -> list[str]:
        return ["ssh", "-F", "/dev/null", "-S", str(sock), "-o", "ControlMaster=no",
                "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-p", str(self.target.ssh_port),
                "-l", self.target.username, *options, self.target.host]

    # --- facts -----------------------------------------------------------------------------

    def pids(self, count: int | None = None) -> list[int]:
        """The masters' process ids (of the first ``count`` connections)."""
        return [m.pid for m in self._masters[:count]]

    def pin(self, cpus: set[int]) -> None:
        """Restrict every master to ``cpus`` (the multiplexing clients only wait)."""
        proctree.pin(self.pids(), cpus)

    def cpu_seconds(self, count: int | None = None) -> float:
        """CPU time used so far by the first ``count`` masters."""
        return sum(proctree.tree_cpu_seconds(pid) for pid in self.pids(count))

    # --- transfers --------------------------------------------------------------------------

    def transfer(self, count: int, direction: str, size: int, data: Path | None = None
                 ) -> Transfer:
        """Move ``size`` bytes on each of the first ``count`` connections at once: ``upload``
        sends the file ``data`` (``size`` bytes) to the sink, ``download`` reads ``size`` bytes
        from the source. Raises :class:`ClientError` if any connection fails."""
        if not 1 <= count <= len(self._masters):
            raise UsageError(f"{count} connections asked, {len(self._masters)} open")
        if direction == "upload":
            if data is None or data.stat().st_size != size:
                raise UsageError(f"upload: give a file of exactly {size} bytes")
            command = SINK
        elif direction == "download":
            command = source(size)
        else:
            raise UsageError(f"direction {direction!r}: choose upload or download")
        for index, master in enumerate(self._masters[:count]):
            if master.poll() is not None:
                raise ClientError(f"openssh: connection {index + 1} has closed")
        starts, ends = [0.0] * count, [0.0] * count
        errors: list[str] = []
        barrier = threading.Barrier(count + 1)

        def one(index: int, stdin: BinaryIO | int) -> None:
            argv = [*self._mux(self._sockets[index]), command]
            barrier.wait()
            starts[index] = time.perf_counter()
            try:
                done = subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, timeout=TRANSFER_TIMEOUT,
                                      check=False)
            except subprocess.TimeoutExpired:
                errors.append(f"connection {index + 1}: no exit within {TRANSFER_TIMEOUT} s")
                return
            finally:
                ends[index] = time.perf_counter()
            if done.returncode != 0:
                errors.append(f"connection {index + 1}: exit {done.returncode}: "
                              f"{done.stderr.decode(errors='replace').strip()[-200:]}")

        with contextlib.ExitStack() as stack:
            # Each connection reads the file through its own descriptor (its own offset).
            inputs: list[BinaryIO | int] = [
                stack.enter_context(data.open("rb")) if data is not None and direction == "upload"
                else subprocess.DEVNULL for _ in range(count)]
            threads = [threading.Thread(target=one, args=(i, inputs[i]), name=f"bulk-{i}")
                       for i in range(count)]
            for thread in threads:
                thread.start()
            masters_before = self.cpu_seconds(count)
            children_before = _children_cpu()
            barrier.wait()  # every connection starts now
            for thread in threads:
                thread.join()
            client_cpu = (self.cpu_seconds(count) - masters_before
                          + _children_cpu() - children_before)
        if errors:
            raise ClientError(f"openssh: {len(errors)} of {count} transfers failed; first: "
                              f"{errors[0]}")
        return Transfer(tuple(e - s for s, e in zip(starts, ends, strict=True)),
                        max(ends) - min(starts), client_cpu)


def _children_cpu() -> float:
    """User + system CPU of this process's reaped children (the multiplexing clients)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _last_line(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1] if lines else "no output"


def zero_file(size: int, folder: Path | None = None) -> Path:
    """A file of ``size`` zero bytes to upload (sparse: reading it costs no disk), in ``folder``
    or in memory (``/dev/shm``) where there is one. The caller removes it."""
    where = folder or (Path("/dev/shm") if os.path.isdir("/dev/shm") else
                       Path(tempfile.gettempdir()))
    path = where / f"mgmtbench-bulk-{os.getpid()}-{size}"
    with path.open("wb") as out:
        out.truncate(size)
    return path
