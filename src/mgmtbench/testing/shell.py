"""Small clients that drive the emulator directly (asyncssh and httpx on real sockets), for tests
of the emulator itself: a raw PTY shell, an exec connection, an HTTPS client."""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import asyncssh

from mgmtbench.emulator.server import DeviceEndpoint, EmulatorThread
from mgmtbench.testing.credentials import PASSWORD, SECRET, USERNAME

if TYPE_CHECKING:
    import httpx

# A prompt at the start of a line, at the end of what was read ("R1>", "asa1(config-if)# ").
# At a line start, or after the backspaces that erase IOS's --More-- prompt.
PROMPT = re.compile(rb"(?<![^\r\n\x08])[\w.-]+(?:\([\w-]+\))?[>#] ?$")


@asynccontextmanager
async def ssh_connect(endpoint: DeviceEndpoint, **options: Any) -> AsyncIterator[
        asyncssh.SSHClientConnection]:
    """An asyncssh connection to ``endpoint`` with the test credentials (host key not checked)."""
    options.setdefault("username", USERNAME)
    options.setdefault("password", PASSWORD)
    options.setdefault("known_hosts", None)
    async with asyncssh.connect(endpoint.host, endpoint.ssh_port, **options) as conn:
        yield conn


class Shell:
    """An interactive PTY session read as raw bytes."""

    def __init__(self, process: asyncssh.SSHClientProcess[bytes]) -> None:
        self.process = process
        self.buffer = b""

    @classmethod
    async def open(cls, conn: asyncssh.SSHClientConnection) -> Shell:
        """Open a PTY shell on ``conn`` and read up to the first prompt."""
        process = await conn.create_process(term_type="vt100", encoding=None)
        shell = cls(process)
        await shell.read_until(PROMPT)
        return shell

    async def read_until(self, pattern: re.Pattern[bytes] | bytes, timeout: float = 10) -> bytes:
        """Read until ``pattern`` is found; return everything up to and including it."""
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))

        async def fill() -> bytes:
            while True:
                found = regex.search(self.buffer)
                if found:
                    taken, self.buffer = self.buffer[: found.end()], self.buffer[found.end():]
                    return taken
                chunk = await self.process.stdout.read(65536)
                if not chunk:
                    raise EOFError(f"session closed; unread: {self.buffer[-300:]!r}")
                self.buffer += chunk

        return await asyncio.wait_for(fill(), timeout)

    def write(self, data: bytes) -> None:
        """Send raw bytes (keystrokes)."""
        self.process.stdin.write(data)

    async def command(self, line: str) -> bytes:
        """Type ``line`` + CR; return what the device printed between the echo and the prompt."""
        self.write(line.encode() + b"\r")
        await self.read_until(line.encode() + b"\r\n")
        return PROMPT.sub(b"", await self.read_until(PROMPT))

    async def enable(self, secret: str) -> None:
        """Enter privileged mode with ``secret`` (at a ``#`` prompt already: nothing asked)."""
        self.write(b"enable\r")
        if (await self.read_until(re.compile(rb"Password: |# ?$"))).endswith(b"Password: "):
            self.write(secret.encode() + b"\r")
            await self.read_until(re.compile(rb"# ?$"))


def https_client(emu: EmulatorThread, *, http2: bool = False, auth: bool = True) -> httpx.Client:
    """An httpx client that trusts the emulator's CA (and logs in, unless ``auth=False``)."""
    import httpx

    assert emu.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    return httpx.Client(verify=context, http2=http2, auth=(USERNAME, PASSWORD) if auth else None)


def paging_off(endpoint: DeviceEndpoint) -> str:
    """The platform's own command that turns paging off (``terminal length 0`` on IOS)."""
    return endpoint.device.platform.style.paging_off


def configure(emu: EmulatorThread, transport: str, lines: list[str]) -> str:
    """What the first device printed for ``lines`` in configuration mode, over HTTPS
    ``POST /admin/config`` (``transport`` "https") or else the SSH shell (``configure
    terminal``, the lines, ``end``; as the terminal printed it, CR LF)."""
    endpoint = emu.endpoints[0]
    if transport == "https":
        with https_client(emu) as client:
            response = client.post(f"https://{endpoint.host}:{endpoint.https_port}/admin/config",
                                   content="\n".join(lines).encode())
        assert response.status_code == 200
        return response.text

    async def over_shell() -> str:
        async with ssh_connect(endpoint) as conn:
            shell = await Shell.open(conn)
            if endpoint.device.platform.style.login_privilege == 1:
                await shell.enable(SECRET)
            await shell.command(paging_off(endpoint))
            await shell.command("configure terminal")
            printed = [(await shell.command(line)).decode() for line in lines]
            await shell.command("end")
        return "".join(printed)

    return asyncio.run(over_shell())
