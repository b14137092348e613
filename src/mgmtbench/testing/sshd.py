"""A real OpenSSH ``sshd`` as a device: it answers each known command with its transcript text.

The server runs on a free loopback port as the current user, with public-key login only, its own
host key of the chosen type and, optionally, restricted algorithm lists (``SshAlgorithms``), so an
experiment can put a client against the emulator and against OpenSSH side by side.

Beside the show commands it runs what the emulator runs for bulk transfer, done by OpenSSH's own
programs: the exec sink ``cat > /dev/null`` and source ``head -c N /dev/zero``
(:mod:`mgmtbench.emulator.ssh.bulk`), legacy SCP (``scp -t``/``scp -f``) and the SFTP subsystem
(``sftp-server``). Every command starts in the device's file folder (:attr:`SshdDevice.files`),
where a link named after the platform's file system (``flash:`` -> ``.``) makes ``flash:/name``
mean what it means on the emulator; relative paths are portable between the two, absolute ones
are not (this sshd has no chroot).
"""

from __future__ import annotations

import getpass
import os
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mgmtbench.emulator.ssh.bulk import MAX_SOURCE_BYTES, SINK_COMMAND
from mgmtbench.errors import UsageError
from mgmtbench.lab.runtimes.sshd import SCP_CASE
from mgmtbench.targets import SshAlgorithms

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
#: Where distributions put OpenSSH's SFTP server program (Debian first).
SFTP_SERVERS = ("/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server",
                "/usr/libexec/sftp-server", "/usr/lib/ssh/sftp-server")
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
    #: The folder scp, sftp and every exec request work in (the device's "flash").
    files: Path


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
                   algorithms: SshAlgorithms | None = None,
                   file_systems: Sequence[str] = ("flash:",)) -> Iterator[SshdDevice]:
    """Run ``sshd`` on a free loopback port; each command in ``outputs`` prints its text, the
    bulk-transfer commands (sink, source, scp, sftp) run OpenSSH's programs in ``folder/files``
    (where each of ``file_systems`` names that folder itself), any other command prints
    ``% Invalid input`` and exits 1."""
    if host_key_type not in HOST_KEY_TYPES:
        raise UsageError(f"host key type {host_key_type!r}: choose one of "
                         f"{', '.join(HOST_KEY_TYPES)}")
    folder.mkdir(parents=True, exist_ok=True)
    files = folder / "files"
    files.mkdir(exist_ok=True)
    for name in file_systems:
        (files / name).symlink_to(".")
    sftp_server = sftp_server_program()
    script = folder / "device.sh"
    script.write_text(_device_script(folder, outputs, files, sftp_server))
    script.chmod(0o755)
    with _sshd(folder, authorized_keys, host_key_type, files, [
        f"ForceCommand {script}",
        # The subsystem's command reaches the ForceCommand script as SSH_ORIGINAL_COMMAND.
        *([f"Subsystem sftp {sftp_server}"] if sftp_server else []),
        *_sshd_algorithms(algorithms or SshAlgorithms()),
    ]) as device:
        yield device


@contextmanager
def _sshd(folder: Path, authorized_keys: Path, host_key_type: str, files: Path,
          settings: Sequence[str]) -> Iterator[SshdDevice]:
    """``sshd`` on a free loopback port with its own host key of ``host_key_type``, public-key
    login as the current user (``authorized_keys``) and ``settings`` beyond the common ones;
    its configuration checked first (``sshd -t``), stopped on exit."""
    if not os.access(SSHD, os.X_OK):
        raise UsageError(f"{SSHD} not found: install openssh-server")
    folder.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    host_key = folder / f"ssh_host_{host_key_type}_key"
    subprocess.run(["ssh-keygen", "-q", *HOST_KEY_TYPES[host_key_type], "-N", "", "-f",
                    str(host_key)], check=True)
    port = free_port()
    config = folder / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {host_key}",
        f"AuthorizedKeysFile {authorized_keys}", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PidFile none",
        "PermitRootLogin prohibit-password", "LogLevel ERROR",
        # bash started by sshd (a login shell, or the one that runs a ForceCommand) reads
        # ~/.bashrc unless it is a nested shell (SHLVL >= 1): a developer's .bashrc (pyenv,
        # conda ...) would add its own time, 0.5 s here, to every session.
        "SetEnv SHLVL=1",
        *settings,
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
        yield SshdDevice("127.0.0.1", port, getpass.getuser(), known_hosts, log, files)
    finally:
        process.terminate()
        process.wait(timeout=10)


def sftp_server_program() -> str | None:
    """OpenSSH's ``sftp-server`` on this machine, or None."""
    return next((p for p in SFTP_SERVERS if os.access(p, os.X_OK)), None)


def bulk_cases(sftp_server: str | None) -> list[str]:
    """The ``case "$SSH_ORIGINAL_COMMAND" in`` branches (sh) that run the bulk-transfer requests
    with OpenSSH's programs, as the emulator runs them: the sink, the source (refused over
    :data:`~mgmtbench.emulator.ssh.bulk.MAX_SOURCE_BYTES` with the emulator's message), legacy SCP
    and, given its program, SFTP (the subsystem's command reaches a ForceCommand script as
    SSH_ORIGINAL_COMMAND). Anything else falls through."""
    q = shlex.quote
    limit = MAX_SOURCE_BYTES
    cases = [
        f"  {q(SINK_COMMAND)}) exec cat > /dev/null ;;",
        "  'head -c '*' /dev/zero')",
        "    n=${SSH_ORIGINAL_COMMAND#head -c }; n=${n% /dev/zero}",
        "    case \"$n\" in ''|*[!0-9]*) echo '% Invalid input'; exit 1 ;; esac",
        f"    if [ ${{#n}} -le 10 ] && [ \"$n\" -le {limit} ]; then exec head -c \"$n\" /dev/zero; fi",
        f"    echo \"head: $n bytes: the source's limit is {limit} bytes\" >&2; exit 1 ;;",
        *SCP_CASE,
    ]
    if sftp_server:
        cases.append(f"  {q(sftp_server)}) exec {q(sftp_server)} ;;")
    return cases


def _device_script(folder: Path, outputs: Mapping[str, str], files: Path,
                   sftp_server: str | None) -> str:
    """The ForceCommand script: a case over SSH_ORIGINAL_COMMAND."""
    q = shlex.quote
    cases = []
    for index, (command, text) in enumerate(outputs.items()):
        path = folder / f"output{index}.txt"
        path.write_text(text)
        cases.append(f"  {q(command)}) exec cat {q(str(path))} ;;")
    return ("#!/bin/sh\n"
            f"cd {q(str(files))} || exit 1\n"
            "case \"$SSH_ORIGINAL_COMMAND\" in\n" + "\n".join([*cases, *bulk_cases(sftp_server)])
            + "\n  *) echo '% Invalid input'; exit 1 ;;\nesac\n")


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
    """The ``ssh`` command line for one exec request with public-key auth and strict host keys
    (errors only on stderr: a device's login banner would be there too)."""
    return [
        "ssh", "-F", "/dev/null", "-p", str(port), "-i", str(key),
        "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
        "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=yes",
        "-o", "ControlMaster=no", f"{user}@{host}", command,
    ]


@contextmanager
def login_server(folder: Path, authorized_keys: Path) -> Iterator[SshdDevice]:
    """Run ``sshd`` on a free loopback port as a host's own sshd: public-key login to the current
    user's shell, running any command (what Dask's ``SSHCluster`` needs to start its scheduler
    and workers), host key ed25519; ``files`` is ``folder``."""
    with _sshd(folder, authorized_keys, "ed25519", folder, []) as device:
        yield device
