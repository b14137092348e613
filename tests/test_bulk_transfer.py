"""Bulk transfer against the emulator and a real OpenSSH sshd, with real clients on real sockets:
the exec sink and source (the same exec requests on both servers); SCP and SFTP on the device's
file system with every client that has them (OpenSSH scp in both protocols and sftp, paramiko's
SFTPClient and the ``scp`` package, asyncssh, ssh2-python, Netmiko's ``file_transfer``); the size
bound and the root of the emulator's file system; ``dir`` and ``verify /md5`` in its CLI."""

from __future__ import annotations

import argparse
import asyncio
import errno
import hashlib
import logging
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import asyncssh
import paramiko
import pytest
import scp
from netmiko import ConnectHandler, file_transfer

from mgmtbench.emulator import EmulatorThread, Limits
from mgmtbench.emulator.command import options_from_args, register
from mgmtbench.emulator.device.filesystem import MAX_ENTRIES, DeviceFileSystem
from mgmtbench.emulator.ssh.bulk import MAX_SOURCE_BYTES, SINK_COMMAND, source_command
from mgmtbench.emulator.ssh.server import SshCounts
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, ClientKeys
from mgmtbench.testing.fixtures import PLATFORMS, emulator_options, hostname_for
from mgmtbench.testing.shell import PROMPT, Shell, ssh_connect
from mgmtbench.testing.sshd import openssh_server, ssh_command

SIZE = 8 * 1000 * 1000  # the algorithm matrix's 8 MB
SERVERS = ("emulator", "sshd")


@dataclass
class Server:
    """Where a client logs in (public key) and what the server has counted, if it counts."""

    name: str
    host: str
    port: int
    user: str
    known_hosts: Path
    key: Path
    counts: SshCounts = field(default_factory=SshCounts)
    files: DeviceFileSystem | Path | None = None  # where the server stores uploads

    def stored(self, name: str) -> bytes:
        """The content of file ``name`` as the server holds it."""
        if isinstance(self.files, Path):
            return (self.files / name).read_bytes()
        assert self.files is not None
        handle = self.files.open(self.files.resolve(name))
        return handle.read(0, handle.size)

    def ssh(self, command: str) -> list[str]:
        return ssh_command(self.host, self.port, self.user, self.key, self.known_hosts, command)

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[asyncssh.SSHClientConnection]:
        async with asyncssh.connect(self.host, self.port, username=self.user,
                                    client_keys=[str(self.key)],
                                    known_hosts=str(self.known_hosts)) as conn:
            yield conn


@pytest.fixture(scope="module")
def emulator(client_keys: ClientKeys) -> Iterator[EmulatorThread]:
    with EmulatorThread(emulator_options("cisco_ios", client_keys, https=False)) as emu:
        yield emu


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory, client_keys: ClientKeys) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("bulk-sshd")
    with openssh_server(folder, client_keys.authorized_keys, {}) as device:
        yield Server("sshd", device.host, device.port, device.user, device.known_hosts,
                     client_keys.private, files=device.files)


@pytest.fixture(params=SERVERS)
def server(request: pytest.FixtureRequest, client_keys: ClientKeys) -> Server:
    if request.param == "sshd":
        found: Server = request.getfixturevalue("sshd")
        return found
    emu: EmulatorThread = request.getfixturevalue("emulator")
    endpoint = emu.endpoints[0]
    assert endpoint.ssh_port
    return Server("emulator", endpoint.host, endpoint.ssh_port, USERNAME,
                  emu.emulator.known_hosts, client_keys.private, endpoint.ssh_counts,
                  endpoint.device.files)


T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


# --- the exec sink and source ---------------------------------------------------------------------


def test_sink_with_openssh(server: Server, tmp_path: Path) -> None:
    payload = tmp_path / "payload"
    payload.write_bytes(bytes(range(256)) * (SIZE // 256))
    before = server.counts.sink_bytes
    with payload.open("rb") as stdin:
        done = subprocess.run(server.ssh(SINK_COMMAND), stdin=stdin, capture_output=True,
                              timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    if server.name == "emulator":
        assert server.counts.sink_bytes - before == SIZE


def test_source_with_openssh(server: Server) -> None:
    before = server.counts.source_bytes
    done = subprocess.run(server.ssh(source_command(SIZE)), capture_output=True, timeout=60,
                          check=False)
    assert (done.returncode, done.stderr) == (0, b"")
    assert len(done.stdout) == SIZE
    assert done.stdout.count(0) == SIZE
    if server.name == "emulator":
        assert server.counts.source_bytes - before == SIZE


def test_sink_with_asyncssh(server: Server) -> None:
    async def send() -> asyncssh.SSHCompletedProcess:
        async with server.connect() as conn:
            process = await conn.create_process(SINK_COMMAND, encoding=None)
            chunk = b"\xa5" * 65536
            sent = 0
            while sent < SIZE:
                piece = chunk[: SIZE - sent]
                process.stdin.write(piece)
                await process.stdin.drain()
                sent += len(piece)
            process.stdin.write_eof()
            result: asyncssh.SSHCompletedProcess = await process.wait()
            return result

    before = server.counts.sink_bytes
    result = run(send())
    assert (result.exit_status, result.stdout, result.stderr) == (0, b"", b"")
    if server.name == "emulator":
        assert server.counts.sink_bytes - before == SIZE


def test_source_with_asyncssh(server: Server) -> None:
    async def receive() -> tuple[int | None, int, int]:
        async with server.connect() as conn:
            process = await conn.create_process(source_command(SIZE), encoding=None)
            total = zeros = 0
            while chunk := await process.stdout.read(1 << 20):
                total += len(chunk)
                zeros += chunk.count(0)
            await process.wait()
            return process.exit_status, total, zeros

    assert run(receive()) == (0, SIZE, SIZE)


@pytest.mark.parametrize("size", [0, 1, 262_143, 262_145])
def test_source_sizes(server: Server, size: int) -> None:
    done = subprocess.run(server.ssh(source_command(size)), capture_output=True, timeout=60,
                          check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, bytes(size), b"")


def test_sink_of_nothing(server: Server) -> None:
    done = subprocess.run(server.ssh(SINK_COMMAND), stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_source_over_the_limit_is_refused(server: Server) -> None:
    size = MAX_SOURCE_BYTES + 1
    done = subprocess.run(server.ssh(source_command(size)), capture_output=True, timeout=60,
                          check=False)
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr == (f"head: {size} bytes: the source's limit is {MAX_SOURCE_BYTES} "
                           "bytes\n").encode()


@pytest.mark.parametrize("command", ["head -c 12x /dev/zero", "head -c -1 /dev/zero",
                                     "cat >/dev/null", "head -c 5 /dev/urandom"])
def test_near_misses_are_not_bulk_commands(server: Server, command: str) -> None:
    done = subprocess.run(server.ssh(command), stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=60, check=False)
    assert done.returncode == 1
    assert b"% Invalid input" in done.stdout


def test_the_cli_shell_does_not_run_them(emulator: EmulatorThread) -> None:
    endpoint = emulator.endpoints[0]

    async def typed() -> bytes:
        async with ssh_connect(endpoint) as conn:
            shell = await Shell.open(conn)
            shell.process.stdin.write(f"{source_command(10)}\r".encode())
            return await shell.read_until(PROMPT)

    answer = run(typed())
    assert b"% Invalid input" in answer
    assert answer.endswith(f"{hostname_for('cisco_ios')}#".encode())


# --- SCP and SFTP: upload and download 1 MB with every client --------------------------------------

FILE_SIZE = 1 << 20


def openssh_options(server: Server) -> list[str]:
    return ["-F", "/dev/null", "-P", str(server.port), "-i", str(server.key),
            "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", f"UserKnownHostsFile={server.known_hosts}", "-o", "StrictHostKeyChecking=yes"]


def openssh_scp(*extra: str) -> Callable[[Server, Path, str, Path], None]:
    def copy(server: Server, local: Path, remote: str, back: Path) -> None:
        at = f"{server.user}@{server.host}:{remote}"
        for source, target in ((str(local), at), (at, str(back))):
            subprocess.run(["scp", "-q", *extra, *openssh_options(server), source, target],
                           check=True, capture_output=True, timeout=60)

    return copy


def openssh_sftp(server: Server, local: Path, remote: str, back: Path) -> None:
    batch = f"put {local} {remote}\nget {remote} {back}\n"
    subprocess.run(["sftp", "-q", *openssh_options(server), "-b", "-",
                    f"{server.user}@{server.host}"], input=batch.encode(), check=True,
                   capture_output=True, timeout=60)


@contextmanager
def paramiko_client(server: Server) -> Iterator[paramiko.SSHClient]:
    client = paramiko.SSHClient()
    client.load_host_keys(str(server.known_hosts))
    client.connect(server.host, server.port, username=server.user,
                   key_filename=str(server.key), look_for_keys=False, allow_agent=False)
    try:
        yield client
    finally:
        client.close()


def paramiko_sftp(server: Server, local: Path, remote: str, back: Path) -> None:
    with paramiko_client(server) as client, client.open_sftp() as sftp:
        sftp.put(str(local), remote)
        sftp.get(remote, str(back))


def scp_package(server: Server, local: Path, remote: str, back: Path) -> None:
    with paramiko_client(server) as client, scp.SCPClient(client.get_transport()) as copier:
        copier.put(str(local), remote)
        copier.get(remote, str(back))


def asyncssh_scp(server: Server, local: Path, remote: str, back: Path) -> None:
    async def copy() -> None:
        async with server.connect() as conn:
            await asyncssh.scp(str(local), (conn, remote))
            await asyncssh.scp((conn, remote), str(back))

    run(copy())


def asyncssh_sftp(server: Server, local: Path, remote: str, back: Path) -> None:
    async def copy() -> None:
        async with server.connect() as conn, conn.start_sftp_client() as sftp:
            await sftp.put(str(local), remote)
            await sftp.get(remote, str(back))

    run(copy())


@contextmanager
def ssh2_session(server: Server) -> Iterator[Any]:
    from ssh2.session import Session

    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        session = Session()
        session.handshake(sock)
        session.userauth_publickey_fromfile(server.user, str(server.key))
        try:
            yield session
        finally:
            session.disconnect()


def ssh2_sftp(server: Server, local: Path, remote: str, back: Path) -> None:
    from ssh2.sftp import LIBSSH2_FXF_CREAT, LIBSSH2_FXF_READ, LIBSSH2_FXF_TRUNC, LIBSSH2_FXF_WRITE

    data = local.read_bytes()
    with ssh2_session(server) as session:
        sftp = session.sftp_init()
        flags = LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC
        with sftp.open(remote, flags, 0o644) as handle:
            for start in range(0, len(data), 32768):
                handle.write(data[start:start + 32768])
        with sftp.open(remote, LIBSSH2_FXF_READ, 0) as handle:
            back.write_bytes(b"".join(chunk for _size, chunk in handle))


def ssh2_scp(server: Server, local: Path, remote: str, back: Path) -> None:
    data = local.read_bytes()
    with ssh2_session(server) as session:
        channel = session.scp_send64(remote, 0o644, len(data), 0, 0)
        for start in range(0, len(data), 32768):
            channel.write(data[start:start + 32768])
        channel.send_eof()
        channel.wait_eof()
        channel.wait_closed()
        channel, info = session.scp_recv2(remote)
        received = bytearray()
        while len(received) < info.st_size:
            _size, chunk = channel.read(min(65536, info.st_size - len(received)))
            received += chunk
        channel.close()
        back.write_bytes(bytes(received))


CLIENTS: dict[str, Callable[[Server, Path, str, Path], None]] = {
    "openssh-scp": openssh_scp(),  # OpenSSH 9: the SFTP protocol
    "openssh-scp-legacy": openssh_scp("-O"),  # the SCP protocol
    "openssh-sftp": openssh_sftp,
    "paramiko-sftp": paramiko_sftp,
    "scp-package": scp_package,
    "asyncssh-scp": asyncssh_scp,
    "asyncssh-sftp": asyncssh_sftp,
    "ssh2-sftp": ssh2_sftp,
    "ssh2-scp": ssh2_scp,
}


@pytest.mark.parametrize("device_path", [False, True], ids=["plain-path", "flash-path"])
@pytest.mark.parametrize("client", CLIENTS)
def test_upload_and_download(server: Server, client: str, device_path: bool,
                             tmp_path: Path) -> None:
    local, back = tmp_path / "up.bin", tmp_path / "down.bin"
    data = os.urandom(FILE_SIZE)
    local.write_bytes(data)
    name = f"{client}-{device_path}.bin"
    CLIENTS[client](server, local, f"flash:/{name}" if device_path else name, back)
    assert server.stored(name) == data
    assert back.read_bytes() == data


def test_one_sftp_read_answers_at_most_what_sftp_server_does(server: Server) -> None:
    """A read asking for 16 MiB of a 1 MiB file gets OpenSSH sftp-server's most (255 KiB, as the
    real sshd answers here too): the
    server decides what one request costs it, not the client (40 reads asking for large blocks
    took the emulator over 1 GB). Whole downloads still work (above: clients read on)."""
    from mgmtbench.emulator.ssh.sftp import MAX_READ

    async def read() -> int:
        async with server.connect() as conn, conn.start_sftp_client() as sftp:
            async with sftp.open("cap.bin", "wb") as out:
                await out.write(os.urandom(FILE_SIZE))
            async with sftp.open("cap.bin", "rb") as source:
                # One FXP_READ, as the protocol carries it (the file object's read splits a
                # big read into blocks and reads on after a short one).
                handler, handle = sftp._handler, source._handle
                assert handle is not None
                data, _ = await handler.read(handle, 0, 16 * FILE_SIZE)
                return len(data)

    assert run(read()) == MAX_READ


# --- Netmiko's file_transfer: dir, free space, SCP, verify /md5 -------------------------------------


# Netmiko's file_transfer on EOS, NX-OS and Junos runs commands the emulator does not have
# (EOS and Junos: a Unix shell's ls/df/md5; NX-OS: `show file ... md5sum`).
@pytest.mark.parametrize("platform", [p for p in PLATFORMS if p in ("cisco_ios", "cisco_asa")])
def test_netmiko_file_transfer(platform: str, fresh_emulator: Callable[..., EmulatorThread],
                               tmp_path: Path) -> None:
    endpoint = fresh_emulator(platform, https=False).endpoints[0]
    style = endpoint.device.platform.style
    local, back = tmp_path / "up.bin", tmp_path / "down.bin"
    data = os.urandom(FILE_SIZE)
    local.write_bytes(data)
    conn = ConnectHandler(device_type=style.clients.netmiko_device_type, host=endpoint.host,
                          port=endpoint.ssh_port, username=USERNAME, password=PASSWORD,
                          secret=SECRET, session_log=str(tmp_path / "netmiko.log"))
    try:
        conn.enable()
        # On IOS Netmiko finds the file system itself (`dir`); an ASA's must be given.
        put = file_transfer(conn, source_file=str(local), dest_file="netmiko.bin",
                            file_system=None if platform == "cisco_ios" else style.file_system,
                            direction="put")
        again = file_transfer(conn, source_file=str(local), dest_file="netmiko.bin",
                              file_system=style.file_system, direction="put")
        get = file_transfer(conn, source_file="netmiko.bin", dest_file=str(back),
                            file_system=style.file_system, direction="get")
    finally:
        conn.disconnect()
    assert put == {"file_exists": True, "file_transferred": True, "file_verified": True}
    # The file is there with the same MD5: nothing to send.
    assert again == {"file_exists": True, "file_transferred": False, "file_verified": True}
    assert get == {"file_exists": True, "file_transferred": True, "file_verified": True}
    files = endpoint.device.files
    stored = files.open(files.resolve("netmiko.bin"))
    assert stored.read(0, stored.size) == data
    assert back.read_bytes() == data


# --- the emulator's file system: its size bound and its root ---------------------------------------


@pytest.fixture
def small_flash(fresh_emulator: Callable[..., EmulatorThread], client_keys: ClientKeys) -> Server:
    """An emulated device whose flash: holds 1.5 MiB."""
    emu = fresh_emulator(https=False, limits=Limits(file_system_size=FILE_SIZE * 3 // 2))
    endpoint = emu.endpoints[0]
    assert endpoint.ssh_port
    return Server("emulator", endpoint.host, endpoint.ssh_port, USERNAME,
                  emu.emulator.known_hosts, client_keys.private, endpoint.ssh_counts,
                  endpoint.device.files)


@pytest.mark.parametrize("client", ["openssh-scp", "openssh-scp-legacy", "openssh-sftp"])
def test_a_full_file_system_refuses_with_openssh(small_flash: Server, client: str,
                                                 tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    local = tmp_path / "big.bin"
    local.write_bytes(os.urandom(2 * FILE_SIZE))
    with caplog.at_level(logging.DEBUG), pytest.raises(subprocess.CalledProcessError) as failed:
        CLIENTS[client](small_flash, local, "big.bin", tmp_path / "back.bin")
    message = failed.value.stderr.decode()
    if client == "openssh-scp-legacy":  # SCP carries the server's message
        assert "No space left on device: flash: holds at most 1572864 bytes" in message
    else:  # SFTP v3 has no such status: OpenSSH prints the generic one
        assert "Failure" in message
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    files = small_flash.files
    assert isinstance(files, DeviceFileSystem)
    assert files.used <= files.capacity
    # What fits still fits, once the partial file is gone.
    files.remove(files.resolve("big.bin"))
    assert files.used == 0
    local.write_bytes(os.urandom(FILE_SIZE))
    CLIENTS[client](small_flash, local, "fits.bin", tmp_path / "back.bin")
    assert small_flash.stored("fits.bin") == local.read_bytes()


def test_a_full_file_system_refuses_with_asyncssh(small_flash: Server, tmp_path: Path) -> None:
    local = tmp_path / "big.bin"
    local.write_bytes(os.urandom(2 * FILE_SIZE))

    async def put(how: str) -> None:
        async with small_flash.connect() as conn:
            if how == "sftp":
                async with conn.start_sftp_client() as sftp:
                    await sftp.put(str(local), "big.bin")
            else:
                await asyncssh.scp(str(local), (conn, "big.bin"))

    for how in ("sftp", "scp"):
        with pytest.raises(asyncssh.SFTPError, match="No space left on device: flash: holds"):
            run(put(how))


@pytest.fixture
def fits(tmp_path: Path) -> Path:
    local = tmp_path / "fits.bin"
    local.write_bytes(b"x" * 1000)
    return local


ESCAPES = ["../outside.bin", "../../../../tmp/outside.bin", "sub/../../outside.bin"]


@pytest.mark.parametrize("path", ESCAPES)
@pytest.mark.parametrize("client", ["openssh-scp", "openssh-scp-legacy", "asyncssh-sftp",
                                    "asyncssh-scp", "paramiko-sftp"])
def test_paths_above_the_root_are_refused(small_flash: Server, client: str, path: str,
                                          fits: Path, tmp_path: Path) -> None:
    files = small_flash.files
    assert isinstance(files, DeviceFileSystem)
    files.mkdir(("sub",))
    with pytest.raises((subprocess.CalledProcessError, asyncssh.SFTPError, OSError,
                        scp.SCPException)):
        CLIENTS[client](small_flash, fits, path, tmp_path / "back.bin")
    assert [e.name for e in files.listdir(())] == ["sub"]
    assert files.listdir(("sub",)) == []


def test_absolute_paths_stay_inside(small_flash: Server, fits: Path, tmp_path: Path) -> None:
    outside = Path("/tmp") / f"mgmtbench-escape-{os.getpid()}-{tmp_path.name}"
    for client in ("openssh-scp", "openssh-scp-legacy", "asyncssh-sftp"):
        with pytest.raises((subprocess.CalledProcessError, asyncssh.SFTPError)):
            CLIENTS[client](small_flash, fits, str(outside), tmp_path / "back.bin")
        assert not outside.exists()
    # "/" is the file system's root.
    CLIENTS["asyncssh-sftp"](small_flash, fits, "/root.bin", tmp_path / "back.bin")
    assert small_flash.stored("root.bin") == fits.read_bytes()


def test_links_are_refused(small_flash: Server, fits: Path, tmp_path: Path) -> None:
    CLIENTS["asyncssh-sftp"](small_flash, fits, "target.bin", tmp_path / "back.bin")

    async def link(kind: str) -> None:
        async with small_flash.connect() as conn, conn.start_sftp_client() as sftp:
            if kind == "symlink":
                await sftp.symlink("/etc/passwd", "passwd")
            else:
                await sftp.link("target.bin", "hard.bin")

    for kind in ("symlink", "link"):
        with pytest.raises(asyncssh.SFTPOpUnsupported):
            run(link(kind))


def test_sftp_file_operations(small_flash: Server, fits: Path, tmp_path: Path) -> None:
    async def session() -> tuple[list[str], int, str, int]:
        async with small_flash.connect() as conn, conn.start_sftp_client() as sftp:
            await sftp.mkdir("configs")
            await sftp.put(str(fits), "configs/a.cfg")
            await sftp.rename("configs/a.cfg", "configs/b.cfg")
            async with sftp.open("configs/b.cfg", "ab") as handle:
                await handle.write(b"!end\n")
            size = (await sftp.stat("flash:/configs/b.cfg")).size
            names = sorted(await sftp.listdir("configs"))
            where = await sftp.realpath("configs/../configs/.")
            free = (await sftp.statvfs("/")).bavail
            await sftp.remove("configs/b.cfg")
            await sftp.rmdir("configs")
            assert size is not None
            return names, size, where, free

    names, size, where, free = run(session())
    assert names == [".", "..", "b.cfg"]
    assert (size, where) == (1005, "/configs")
    assert free == (FILE_SIZE * 3 // 2 - 1005) // 1024
    files = small_flash.files
    assert isinstance(files, DeviceFileSystem)
    assert (files.listdir(()), files.used) == ([], 0)


# --- dir and verify /md5 in the CLI ------------------------------------------------------------------


def test_dir_and_verify_md5_over_exec(small_flash: Server, fits: Path, tmp_path: Path) -> None:
    CLIENTS["asyncssh-scp"](small_flash, fits, "flash:/cfg.txt", tmp_path / "back.bin")
    digest = hashlib.md5(fits.read_bytes(), usedforsecurity=False).hexdigest()
    done = subprocess.run(small_flash.ssh("dir\nverify /md5 flash:/cfg.txt\ndir flash:/cfg.txt"),
                          capture_output=True, text=True, timeout=60, check=False)
    files = small_flash.files
    assert isinstance(files, DeviceFileSystem)
    stamp = time.strftime("%b %d %Y %H:%M:%S +00:00", time.gmtime(files.stat(("cfg.txt",)).mtime))
    line = f"     2  -rw-             1000  {stamp}  cfg.txt"
    footer = f"1572864 bytes total ({1572864 - 1000} bytes free)"
    assert (done.returncode, done.stdout) == (0, (
        f"Directory of flash:/\n\n{line}\n\n{footer}\n"
        f".Done!\nverify /md5 (flash:/cfg.txt) = {digest}\n"
        f"Directory of flash:/cfg.txt\n\n{line}\n\n{footer}\n"))


@pytest.mark.parametrize(("command", "output"), [
    ("dir flash:/missing.bin", "%Error opening flash:/missing.bin (No such file or directory)\n"),
    ("verify /md5 flash:/missing.bin",
     "%Error opening flash:/missing.bin (No such file or directory)\n"),
    ("dir bootflash:", "%Error opening bootflash: (No such file system: bootflash:)\n"),
])
def test_file_commands_errors(small_flash: Server, command: str, output: str) -> None:
    done = subprocess.run(small_flash.ssh(command), capture_output=True, text=True, timeout=60,
                          check=False)
    assert (done.returncode, done.stdout) == (1, output)


def test_empty_file_system_listing(small_flash: Server) -> None:
    done = subprocess.run(small_flash.ssh("dir flash:"), capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout == ("Directory of flash:/\n\nNo files in directory\n\n"
                           "1572864 bytes total (1572864 bytes free)\n")


def test_asa_file_system_is_disk0(fresh_emulator: Callable[..., EmulatorThread],
                                  client_keys: ClientKeys, fits: Path, tmp_path: Path) -> None:
    emu = fresh_emulator("cisco_asa", https=False)
    endpoint = emu.endpoints[0]
    assert endpoint.ssh_port
    asa = Server("emulator", endpoint.host, endpoint.ssh_port, USERNAME,
                 emu.emulator.known_hosts, client_keys.private, files=endpoint.device.files)
    CLIENTS["openssh-scp-legacy"](asa, fits, "disk0:/asa.cfg", tmp_path / "back.bin")
    with pytest.raises(subprocess.CalledProcessError):
        CLIENTS["openssh-scp-legacy"](asa, fits, "flash:/asa.cfg", tmp_path / "back.bin")
    done = subprocess.run(asa.ssh("dir disk0:"), capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.startswith("Directory of disk0:/\n\n")
    assert asa.stored("asa.cfg") == fits.read_bytes()


def test_serve_flag_sets_the_file_system_size() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--file-system-size", "1000"])
    assert options_from_args(args).limits.file_system_size == 1000
    default = options_from_args(parser.parse_args(["serve"]))
    assert default.limits.file_system_size == 64 * 1024 * 1024


# --- the file system itself ----------------------------------------------------------------------


@pytest.mark.parametrize(("path", "parts"), [
    ("a.bin", ("a.bin",)), ("/a.bin", ("a.bin",)), ("flash:/a.bin", ("a.bin",)),
    ("flash:a.bin", ("a.bin",)), ("/flash:/d/a.bin", ("d", "a.bin")), ("flash:", ()),
    ("d/./e/../a.bin", ("d", "a.bin")), ("//d//a.bin", ("d", "a.bin")),
])
def test_paths_resolve_inside_the_root(path: str, parts: tuple[str, ...]) -> None:
    assert DeviceFileSystem("flash:").resolve(path) == parts


@pytest.mark.parametrize(("path", "error"), [
    ("..", PermissionError), ("/../etc/passwd", PermissionError), ("d/../../x", PermissionError),
    ("flash:/..", PermissionError), ("bootflash:/x", FileNotFoundError),
    ("disk0:x", FileNotFoundError), ("a\0b", OSError),
])
def test_paths_that_leave_are_refused(path: str, error: type[OSError]) -> None:
    with pytest.raises(error):
        DeviceFileSystem("flash:").resolve(path)


def test_capacity_counts_every_byte_and_frees_on_delete() -> None:
    files = DeviceFileSystem("flash:", capacity=1000)
    handle = files.open(("a",), write=True, create=True)
    handle.write(900, b"x" * 100)  # a sparse write: the zeros before it count too
    assert (files.used, handle.read(0, 1000)) == (1000, bytes(900) + b"x" * 100)
    with pytest.raises(OSError, match="No space left on device") as full:
        files.open(("b",), write=True, create=True).write(0, b"y")
    assert full.value.errno == errno.ENOSPC
    files.remove(("a",))
    assert files.used == 0
    with pytest.raises(FileNotFoundError):  # writing through a handle of a deleted file
        handle.write(1000, b"z")
    files.open(("b",), write=True, create=True, truncate=True).write(0, b"y" * 1000)
    assert files.free == 0


def test_rename_moves_folders_and_replaces_only_when_asked() -> None:
    files = DeviceFileSystem("flash:")
    files.mkdir(("d",))
    files.open(("d", "a"), write=True, create=True).write(0, b"a")
    files.open(("b",), write=True, create=True).write(0, b"bb")
    files.rename(("d",), ("e",))
    assert [e.name for e in files.listdir(("e",))] == ["a"]
    with pytest.raises(FileExistsError):
        files.rename(("e", "a"), ("b",))
    files.rename(("e", "a"), ("b",), replace=True)
    assert (files.stat(("b",)).size, files.used) == (1, 1)
    with pytest.raises(PermissionError):
        files.rename(("e",), ("e", "inside"))


def test_the_number_of_entries_is_bounded() -> None:
    files = DeviceFileSystem("flash:")
    for index in range(MAX_ENTRIES - 1):  # the root is one
        files.mkdir((str(index),))
    with pytest.raises(OSError, match="files and folders"):
        files.mkdir(("one-more",))
