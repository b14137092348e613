"""A real OpenSSH ``sshd`` as a device: it answers each known command with its transcript text.

The server runs on a free loopback port as the current user, with public-key login only, its own
host key of the chosen type and, optionally, restricted algorithm lists (``SshAlgorithms``), so an
experiment can put a client against the emulator and against OpenSSH side by side.
"""

from __future__ import annotations

import getpass
import os
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mgmtbench.errors import UsageError
from mgmtbench.targets import SshAlgorithms

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
#: ssh-keygen types for the host key.
HOST_KEY_TYPES = {"ed25519": ["-t", "ed25519"], "ecdsa": ["-t", "ecdsa", "-b", "256"],
                  "rsa": ["-t", "rsa", "-b", "3072"]}


@dataclass(frozen=True)
class SshdDevice:
    """A running ``sshd``: where it listens, who logs in, and the known_hosts line for it."""

    host: str
    port: int
    user: str
    known_hosts: Path
    log: Path


def free_port() -> int:
    """A TCP port nobody listens on right now (on loopback)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _sshd_algorithms(algorithms: SshAlgorithms) -> list[str]:
    lines = []
    for keyword, names in (("KexAlgorithms", algorithms.kex), ("Ciphers", algorithms.ciphers),
                           ("MACs", algorithms.macs), ("HostKeyAlgorithms", algorithms.host_key)):
        if names:
            lines.append(f"{keyword} {','.join(names)}")
    return lines


@contextmanager
def openssh_server(folder: Path, authorized_keys: Path, outputs: Mapping[str, str], *,
                   host_key_type: str = "ed25519",
                   algorithms: SshAlgorithms | None = None) -> Iterator[SshdDevice]:
    """Run ``sshd`` on a free loopback port; each command in ``outputs`` prints its text, any
    other command prints ``% Invalid input`` and exits 1."""
    if not os.access(SSHD, os.X_OK):
        raise UsageError(f"{SSHD} not found: install openssh-server")
    if host_key_type not in HOST_KEY_TYPES:
        raise UsageError(f"host key type {host_key_type!r}: choose one of "
                         f"{', '.join(HOST_KEY_TYPES)}")
    folder.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    host_key = folder / f"ssh_host_{host_key_type}_key"
    subprocess.run(["ssh-keygen", "-q", *HOST_KEY_TYPES[host_key_type], "-N", "", "-f",
                    str(host_key)], check=True)
    cases = []
    for index, (command, text) in enumerate(outputs.items()):
        path = folder / f"output{index}.txt"
        path.write_text(text)
        cases.append(f"  {shlex.quote(command)}) exec cat {shlex.quote(str(path))} ;;")
    script = folder / "device.sh"
    script.write_text("#!/bin/sh\ncase \"$SSH_ORIGINAL_COMMAND\" in\n" + "\n".join(cases)
                      + "\n  *) echo '% Invalid input'; exit 1 ;;\nesac\n")
    script.chmod(0o755)
    port = free_port()
    config = folder / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {host_key}",
        f"AuthorizedKeysFile {authorized_keys}", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PidFile none",
        "PermitRootLogin prohibit-password", f"ForceCommand {script}", "LogLevel ERROR",
        *_sshd_algorithms(algorithms or SshAlgorithms()),
    ]) + "\n")
    log = folder / "sshd.log"
    check = subprocess.run([SSHD, "-t", "-f", str(config)], capture_output=True, text=True)
    if check.returncode:
        raise UsageError(f"sshd refuses its configuration: {check.stderr.strip()}")
    with log.open("wb") as log_file:
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=log_file)
    try:
        _wait_for_port(port, process, log)
        public = (folder / f"{host_key.name}.pub").read_text().split()
        known_hosts = folder / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {public[0]} {public[1]}\n")
        yield SshdDevice("127.0.0.1", port, getpass.getuser(), known_hosts, log)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise UsageError(f"sshd exited: {log.read_text().strip()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise UsageError(f"sshd did not listen on port {port} within 10 s")


def ssh_command(host: str, port: int, user: str, key: Path, known_hosts: Path,
                command: str) -> list[str]:
    """The ``ssh`` command line for one exec request with public-key auth and strict host keys."""
    return [
        "ssh", "-F", "/dev/null", "-p", str(port), "-i", str(key),
        "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
        "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=yes",
        "-o", "ControlMaster=no", f"{user}@{host}", command,
    ]
