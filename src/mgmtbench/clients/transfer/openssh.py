"""The OpenSSH ``ssh`` binary, as the study ran it: a process per connection, algorithms as ``-o``.

``connect_once`` is one ``ssh host COMMAND`` process (no multiplexing). ``open`` starts a
ControlMaster (``ssh -M -fN``, with ``-v`` into a log file, which is where :meth:`negotiated`
reads the master's ``kex: algorithm:`` and ``kex: client->server cipher: ... MAC: ...`` lines);
``send`` and ``receive`` are ``ssh -S`` processes on that master's connection, a channel each. The
mux client hands its standard input and output to the master, so the master reads the sink's
data straight from a file of zeros and writes the source's into a pipe read here.

Lists: ``ssh -Q kex|cipher|mac`` (AEAD: ``ssh -Q cipher-auth``); default preference: ``ssh -G``.
Login with the target's key file only (``-i``, ``IdentitiesOnly``, ``BatchMode``); the host key
checked strictly against ``target.known_hosts``.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
from pathlib import Path
from typing import IO, ClassVar

from mgmtbench.clients.algorithms import AlgorithmLists, openssh_query
from mgmtbench.clients.openssh.adapter import failure
from mgmtbench.clients.transfer.base import (
    SINK_COMMAND,
    TRIVIAL_COMMAND,
    Negotiated,
    TransferClient,
    check_transfer,
    source_command,
)
from mgmtbench.errors import ClientError, ClientTimeout, UsageError
from mgmtbench.targets import Target

_TIMEOUT = 120  # seconds for one process (8 MB at a WAN RTT fits many times over)
_KEX = re.compile(r"kex: algorithm: (\S+)")
_CIPHER = re.compile(r"kex: client->server cipher: (\S+) MAC: (\S+)")


class OpensshTransfer(TransferClient):
    """``ssh`` processes; a ControlMaster for the kept connection."""

    name: ClassVar[str] = "openssh"

    _dir: tempfile.TemporaryDirectory[str] | None = None
    _socket: Path | None = None
    _log: Path | None = None

    def __init__(self, target: Target) -> None:
        if target.key_file is None:
            raise UsageError("openssh logs in with a key only: give the target a key_file")
        super().__init__(target)

    @classmethod
    def missing(cls) -> str | None:
        """An install hint if ``ssh`` is not on PATH."""
        import shutil

        return None if shutil.which("ssh") else "client openssh needs ssh: install openssh-client"

    @classmethod
    def versions(cls) -> dict[str, str]:
        """``ssh -V``."""
        from mgmtbench.clients.openssh.adapter import OpensshClient

        return OpensshClient.versions()

    @classmethod
    def supported(cls) -> AlgorithmLists:
        """``ssh -Q``."""
        return AlgorithmLists.of(openssh_query("kex"), openssh_query("cipher"),
                                 openssh_query("mac"), openssh_query("cipher-auth"))

    @classmethod
    def preferred(cls) -> AlgorithmLists:
        """``ssh -G``: the client's effective defaults with an empty configuration."""
        done = subprocess.run(["ssh", "-F", "/dev/null", "-G", "localhost"], capture_output=True,
                              text=True, timeout=10, check=False)
        config = dict(line.partition(" ")[::2] for line in done.stdout.splitlines())
        return AlgorithmLists.of(config.get("kexalgorithms", "").split(","),
                                 config.get("ciphers", "").split(","),
                                 config.get("macs", "").split(","), cls.supported().aead)

    def _argv(self, *options: str) -> list[str]:
        t = self.target
        argv = ["ssh", "-F", "/dev/null", "-p", str(t.ssh_port), "-i", str(t.key_file),
                "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
                "-o", "GlobalKnownHostsFile=/dev/null"]
        if t.known_hosts is not None:
            argv += ["-o", f"UserKnownHostsFile={t.known_hosts}",
                     "-o", "StrictHostKeyChecking=yes"]
        else:
            argv += ["-o", "UserKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=no"]
        chosen = t.algorithms
        for option, names in (("KexAlgorithms", chosen.kex), ("Ciphers", chosen.ciphers),
                              ("MACs", chosen.macs), ("HostKeyAlgorithms", chosen.host_key)):
            if names:
                argv += ["-o", f"{option}={','.join(names)}"]
        return [*argv, *options, f"{t.username}@{t.host}"]

    def connect_once(self, command: str = TRIVIAL_COMMAND) -> None:
        """One ``ssh host COMMAND`` process, no multiplexing."""
        done = _run([*self._argv("-o", "ControlMaster=no", "-o", "ControlPath=none"), command],
                    stdin=subprocess.DEVNULL)
        check_transfer(self.name, repr(command), done.returncode, len(done.stdout), 0)

    def open(self) -> None:
        """Start the ControlMaster (``-v`` into a log: the negotiated algorithms)."""
        self._dir = tempfile.TemporaryDirectory(prefix="mgmtbench-ssh-")
        self._socket = Path(self._dir.name) / "master"
        self._log = Path(self._dir.name) / "master.log"
        argv = self._argv("-M", "-S", str(self._socket), "-o", "ControlPersist=yes", "-fN",
                          "-v", "-E", str(self._log))
        # -v overrides LogLevel=ERROR for the master only; its lines go to the log file.
        done = _run(argv, stdin=subprocess.DEVNULL)
        if done.returncode:
            self.close()
            raise failure(_last_line(self._log_text() or done.stderr.decode(errors="replace")))

    def _log_text(self) -> str:
        return self._log.read_text(errors="replace") if self._log and self._log.exists() else ""

    def negotiated(self) -> Negotiated:
        """From the master's ``-v`` log."""
        text = self._log_text()
        kex, cipher = _KEX.search(text), _CIPHER.search(text)
        if kex is None or cipher is None:
            raise ClientError("openssh: the master's log does not say what was negotiated")
        mac = cipher.group(2)
        return Negotiated(kex.group(1), cipher.group(1), "" if mac == "<implicit>" else mac)

    def _mux(self, command: str) -> list[str]:
        if self._socket is None:
            raise UsageError("openssh: open() the connection before transferring")
        return [*self._argv("-S", str(self._socket), "-o", "ControlMaster=no"), command]

    def send(self, size: int) -> None:
        """``ssh -S master host 'cat > /dev/null' < zeros``."""
        assert self._dir is not None
        zeros = Path(self._dir.name) / f"zeros-{size}"
        if not zeros.exists():
            with zeros.open("wb") as out:
                out.truncate(size)  # a sparse file of zeros
        with zeros.open("rb") as data:
            done = _run(self._mux(SINK_COMMAND), stdin=data)
        check_transfer(self.name, "the sink", done.returncode, len(done.stdout), 0)

    def receive(self, size: int) -> None:
        """``ssh -S master host 'head -c N /dev/zero'``, its output counted."""
        done = _run(self._mux(source_command(size)), stdin=subprocess.DEVNULL)
        check_transfer(self.name, "the source", done.returncode, len(done.stdout), size)

    def close(self) -> None:
        """Stop the master (``-O exit``)."""
        if self._socket is not None and self._socket.exists():
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                subprocess.run(self._argv("-S", str(self._socket), "-O", "exit"),
                               capture_output=True, timeout=10, check=False)
        if self._dir is not None:
            self._dir.cleanup()
        self._dir = self._socket = self._log = None


def _run(argv: list[str], stdin: int | IO[bytes]) -> subprocess.CompletedProcess[bytes]:
    """Run one ``ssh``; its own failure (exit 255) as a ClientError."""
    try:
        done = subprocess.run(argv, stdin=stdin, capture_output=True, timeout=_TIMEOUT,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise ClientTimeout(f"openssh: no answer within {_TIMEOUT} s") from exc
    if done.returncode == 255:
        raise failure(_last_line(done.stderr.decode(errors="replace")))
    return done


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "ssh failed without a message"
