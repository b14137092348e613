"""``mgmtbench serve`` as a process on loopback ports, for the tests that look at it from outside
(its memory, descriptors, log): started, waited for (bounded), stopped."""

from __future__ import annotations

import re
import resource
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mgmtbench.testing.sshd import free_port


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    ssh_port: int
    https_port: int
    context: ssl.SSLContext

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        assert found is not None
        return int(found.group(1))

    def settled_rss_kib(self, seconds: float = 1.5) -> int:
        time.sleep(seconds)
        return self.rss_kib()


def _free(port: int) -> bool:
    """Whether nobody holds ``port`` on loopback, TCP or UDP (HTTP/3 takes the HTTPS number)."""
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def _port_runs(count: int) -> tuple[int, int]:
    """Two disjoint runs of ``count`` free ports: ``serve --devices N`` puts device i on the
    SSH and HTTPS ports + i, and two single free ports could overlap there (device 1's SSH
    port was device 0's HTTPS port once: "already in use")."""
    for _ in range(100):
        first, second = free_port(), free_port()
        runs = range(first, first + count), range(second, second + count)
        if not set(runs[0]) & set(runs[1]) and all(_free(p) for run in runs for p in run):
            return first, second
    raise AssertionError(f"no two free runs of {count} ports on loopback")


@contextmanager
def serve(tmp_path: Path, *flags: str, open_files: int | None = None) -> Iterator[Served]:
    """``mgmtbench serve`` on free loopback ports, a run of them per port kind with
    ``--devices N`` (``open_files``: its RLIMIT_NOFILE)."""
    devices = int(flags[flags.index("--devices") + 1]) if "--devices" in flags else 1
    ssh_port, https_port = _port_runs(devices)
    # NETCONF and gNMI on free ports too unless the caller chose them: their defaults (8300,
    # 9339) are one port for every ``serve`` on the machine (one held 8300 in a CI run, and two
    # tests could not start their device).
    defaults = [arg for flag in ("--netconf-port", "--gnmi-port") if flag not in flags
                for arg in (flag, "0")]

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with (tmp_path / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", str(ssh_port),
             "--https-port", str(https_port), "--state-dir", str(tmp_path / "state"), *defaults,
             *flags],
            # A function to run between fork and exec only when there is a limit to set:
            # without one Python starts the child by vfork/posix_spawn, and no fork handler
            # runs (gRPC's, from a gNMI test on the same worker, killed a forked child once).
            stdout=subprocess.DEVNULL, stderr=log,
            preexec_fn=limit if open_files is not None else None)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                for port in (ssh_port, https_port):
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, (tmp_path / "serve.log").read_text()
                assert time.monotonic() < deadline, "mgmtbench serve did not start"
                time.sleep(0.2)
        context = ssl.create_default_context(cafile=str(tmp_path / "state" / "tls" / "ca.pem"))
        yield Served(process, ssh_port, https_port, context)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tls(served: Served, source: str = "127.0.0.1") -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", served.https_port), timeout=10,
                                   source_address=(source, 0))
    return served.context.wrap_socket(raw, server_hostname="127.0.0.1")
