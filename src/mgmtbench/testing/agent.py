"""A real OpenSSH ``ssh-agent``, started in a folder of its own and loaded with keys.

Automation at fleet scale logs in with keys held in an agent; an experiment points clients at
:attr:`SshAgent.socket` (``SSH_AUTH_SOCK``) with ``Target(auth=Auth.AGENT, agent_socket=...)``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mgmtbench.errors import UsageError


class SshAgent:
    """A running ``ssh-agent`` (foreground process, ``-D``) listening on :attr:`socket`."""

    def __init__(self, socket: Path, process: subprocess.Popen[bytes]) -> None:
        self.socket = socket
        self.process = process

    @property
    def env(self) -> dict[str, str]:
        """The environment for a child process that should use this agent."""
        return {**os.environ, "SSH_AUTH_SOCK": str(self.socket)}

    def add(self, private_key: Path) -> None:
        """Load ``private_key`` into the agent (``ssh-add``)."""
        done = subprocess.run(["ssh-add", "-q", str(private_key)], env=self.env,
                              capture_output=True, text=True)
        if done.returncode:
            raise UsageError(f"ssh-add {private_key.name} failed: {done.stderr.strip()}")

    def fingerprints(self) -> list[str]:
        """The fingerprints of the keys the agent holds (``ssh-add -l``)."""
        done = subprocess.run(["ssh-add", "-l"], env=self.env, capture_output=True, text=True)
        if done.returncode == 1:  # the agent holds no key
            return []
        if done.returncode:
            raise UsageError(f"ssh-add -l failed: {done.stderr.strip() or done.stdout.strip()}")
        return [line.split()[1] for line in done.stdout.splitlines() if line.strip()]


@contextmanager
def ssh_agent(folder: Path) -> Iterator[SshAgent]:
    """Run ``ssh-agent -D -a folder/agent.sock`` until the block ends."""
    binary = shutil.which("ssh-agent")
    if binary is None:
        raise UsageError("ssh-agent not found: install openssh-client")
    folder.mkdir(parents=True, exist_ok=True)
    sock = folder / "agent.sock"
    process = subprocess.Popen([binary, "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            if process.poll() is not None:
                raise UsageError(f"ssh-agent exited: {process.stderr.read().decode().strip()}"
                                 if process.stderr else "ssh-agent exited")
            if time.monotonic() > deadline:
                raise UsageError("ssh-agent did not make its socket within 10 s")
            time.sleep(0.01)
        yield SshAgent(sock, process)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr:
            process.stderr.close()
