"""A real OpenSSH ``sshd`` serving transcript text, and the ``ssh`` client command line."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def openssh_server(folder: Path, authorized_keys: Path, outputs: Mapping[str, str]) -> Iterator[
        tuple[int, Path]]:
    """Run ``sshd`` on a free loopback port; each command in ``outputs`` prints its text.

    Yields the port and a known_hosts file for it.
    """
    if not os.access(SSHD, os.X_OK):
        raise RuntimeError(f"{SSHD} not found: install openssh-server")
    folder.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    host_key = folder / "ssh_host_ed25519_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)],
                   check=True)
    cases = []
    for index, (command, text) in enumerate(outputs.items()):
        path = folder / f"output{index}.txt"
        path.write_text(text)
        cases.append(f'  "{command}") exec cat {path} ;;')
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
    ]) + "\n")
    log = folder / "sshd.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=log_file)
    try:
        _wait_for_port(port, process, log)
        public = (folder / "ssh_host_ed25519_key.pub").read_text().split()
        known_hosts = folder / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {public[0]} {public[1]}\n")
        yield port, known_hosts
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {log.read_text().strip()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on port {port} within 10 s")


def ssh_command(port: int, user: str, key: Path, known_hosts: Path, command: str) -> list[str]:
    """The ``ssh`` command line for one exec request with public-key auth and strict host keys."""
    return [
        "ssh", "-F", "/dev/null", "-p", str(port), "-i", str(key),
        "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
        "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=yes",
        "-o", "ControlMaster=no", f"{user}@127.0.0.1", command,
    ]
