"""PTY semantics shared by every adapter that drives an interactive shell itself.

The same steps for every library, sans I/O: read the first prompt; ``enable`` if the prompt says
user exec; session prep (``terminal length 0`` or the platform's paging command, ``terminal width
511``); then per command: write it, wait for its echo, read to the prompt. An adapter provides
``send(bytes)`` and ``recv() -> bytes`` (sync or async) and runs the steps with :func:`run_sync` /
:func:`run_async`. (Netmiko and Scrapli run their own PTY logic: that is why they are benchmarked.)
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mgmtbench.errors import AuthenticationFailed, ClientTimeout, ConnectionFailed, WrongOutput
from mgmtbench.targets import Target

# ``R1#``, ``R1(config)#``, ``asa1> ``, Junos's ``admin@R1> ``.
FIRST_PROMPT = re.compile(rb"(?:^|[\r\n])([\w.@-]+)(?:\([\w.-]+\))?[>#] ?$")
PASSWORD_PROMPT = re.compile(rb"[Pp]assword: ?$")


class Reader:
    """The bytes read so far and the searches over them."""

    def __init__(self) -> None:
        self.buffer = b""

    def take(self, pattern: re.Pattern[bytes]) -> bytes | None:
        """Remove and return the buffer up to the end of ``pattern``'s first match, or None."""
        found = pattern.search(self.buffer)
        if found is None:
            return None
        taken, self.buffer = self.buffer[: found.end()], self.buffer[found.end():]
        return taken


@dataclass
class PtyState:
    """What the steps learnt: the device's prompt pattern once the first prompt is seen."""

    prompt: re.Pattern[bytes] = FIRST_PROMPT


def prompt_for(hostname: bytes, gap: str = "") -> re.Pattern[bytes]:
    """The prompt pattern of a device named ``hostname`` (any mode suffix, ``>`` or ``#``);
    ``gap``: what the device prints before the prompt's line (Junos: an empty line, ``"\\n"``;
    its configuration mode's ``[edit]`` is not matched)."""
    lead = rb"\r?\n" * gap.count("\n")
    return re.compile(rb"(?:^|(?P<eol>[\r\n]))" + lead + re.escape(hostname)
                      + rb"(?:\([\w.-]+\))?[>#] ?$")


def output_of(command: str, chunk: bytes, prompt: re.Pattern[bytes]) -> str:
    """The command's output: between its echo line and the prompt, newlines as ``\\n``."""
    text = chunk.replace(b"\r\n", b"\n")
    echo = command.encode()
    at = text.find(echo)
    if at < 0:
        raise WrongOutput(f"no echo of {command!r} before the prompt")
    start = text.find(b"\n", at + len(echo))
    body = text[start + 1:] if start >= 0 else b""
    end = prompt.search(body)
    if end is None:
        raise WrongOutput(f"no prompt after the output of {command!r}")
    cut = end.start()
    ends_line = (end.group("eol") is not None if "eol" in prompt.groupindex
                 else body[cut:cut + 1] == b"\n")
    if ends_line:
        cut += 1  # the prompt pattern starts at the newline that ends the output's last line
    return body[:cut].decode("ascii", "replace")


Send = Callable[[bytes], None]
Recv = Callable[[], bytes]
ASend = Callable[[bytes], Awaitable[None]]
ARecv = Callable[[], Awaitable[bytes]]


def _until_sync(reader: Reader, recv: Recv, pattern: re.Pattern[bytes], timeout: float) -> bytes:
    deadline = time.monotonic() + timeout
    while (taken := reader.take(pattern)) is None:
        if time.monotonic() > deadline:
            raise ClientTimeout(f"timed out waiting for {pattern.pattern!r}; "
                              f"got {reader.buffer[-200:]!r}")
        data = recv()
        if not data:
            raise ConnectionFailed(f"session closed waiting for {pattern.pattern!r}")
        reader.buffer += data
    return taken


async def _until_async(reader: Reader, recv: ARecv, pattern: re.Pattern[bytes],
                       timeout: float) -> bytes:
    deadline = time.monotonic() + timeout
    while (taken := reader.take(pattern)) is None:
        if time.monotonic() > deadline:
            raise ClientTimeout(f"timed out waiting for {pattern.pattern!r}")
        data = await recv()
        if not data:
            raise ConnectionFailed(f"session closed waiting for {pattern.pattern!r}")
        reader.buffer += data
    return taken


class SyncPty:
    """The PTY steps over a blocking channel."""

    def __init__(self, send: Send, recv: Recv, timeout: float = 30) -> None:
        self.send, self.recv, self.timeout = send, recv, timeout
        self.reader = Reader()
        self.prompt = FIRST_PROMPT

    def _until(self, pattern: re.Pattern[bytes]) -> bytes:
        return _until_sync(self.reader, self.recv, pattern, self.timeout)

    def prepare(self, target: Target) -> None:
        """Read the first prompt, enable if needed, and prepare the session (paging, width)."""
        first = self._until(FIRST_PROMPT)
        found = FIRST_PROMPT.search(first)
        assert found is not None
        self.prompt = prompt_for(found.group(1), target.prompt_gap)
        if target.enable_mode and first.rstrip().endswith(b">"):
            self.send(b"enable\n")
            self._until(PASSWORD_PROMPT)
            self.send(target.enable_secret.encode() + b"\n")
            if not self._until(self.prompt).rstrip().endswith(b"#"):
                raise AuthenticationFailed("enable was refused (wrong enable secret?)")
        for line in (target.paging_off, target.width):
            self.command(line)

    def command(self, command: str) -> str:
        """Send one command; return its output."""
        self.send(command.encode() + b"\n")
        return output_of(command, self._until(self.prompt), self.prompt)


class AsyncPty:
    """The PTY steps over an asyncio channel."""

    def __init__(self, send: ASend, recv: ARecv, timeout: float = 30) -> None:
        self.send, self.recv, self.timeout = send, recv, timeout
        self.reader = Reader()
        self.prompt = FIRST_PROMPT

    async def _until(self, pattern: re.Pattern[bytes]) -> bytes:
        return await _until_async(self.reader, self.recv, pattern, self.timeout)

    async def prepare(self, target: Target) -> None:
        """Read the first prompt, enable if needed, and prepare the session (paging, width)."""
        first = await self._until(FIRST_PROMPT)
        found = FIRST_PROMPT.search(first)
        assert found is not None
        self.prompt = prompt_for(found.group(1), target.prompt_gap)
        if target.enable_mode and first.rstrip().endswith(b">"):
            await self.send(b"enable\n")
            await self._until(PASSWORD_PROMPT)
            await self.send(target.enable_secret.encode() + b"\n")
            if not (await self._until(self.prompt)).rstrip().endswith(b"#"):
                raise AuthenticationFailed("enable was refused (wrong enable secret?)")
        for line in (target.paging_off, target.width):
            await self.command(line)

    async def command(self, command: str) -> str:
        """Send one command; return its output."""
        await self.send(command.encode() + b"\n")
        return output_of(command, await self._until(self.prompt), self.prompt)
