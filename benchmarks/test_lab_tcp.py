"""The lab's own TCP as an experiment: the device side's congestion control, cubic against bbr,
side by side in one run, at regional (30 ms) and intercontinental (150 ms).

Why: a host whose default is bbr used to hand it to the emulated device (a new namespace copies
the host's default), and bbr paces a multi-segment answer at a rate estimated from app-limited
samples, so its last segment leaves later the longer the RTT. The lab now sets each end's
congestion control from the profile (``regional+device_cc=bbr``; :mod:`mgmtbench.lab.tcp`); this
benchmark shows what the choice is worth. The benchmark side stays cubic in every case.

Cases, each on a connection made before the timed part:

- httpx ``batch-post``, ``multi-cmd`` and ``keep-alive`` with 5 show commands (the study's modes);
- one large output on a kept HTTPS connection: ``show running-config`` and ``show interfaces``;
- bulk both ways on a kept SSH connection (asyncssh): SFTP and SCP upload and download of
  ``MGMTBENCH_TCP_BULK_BYTES`` (default 4 MB) to the device's flash.

Recorded: time in RTTs, bytes per round, and the lab's TCP facts (both ends' congestion control
as a live connection showed them). ``-k regional``, ``-k bbr`` or ``-k sftp`` narrows. Needs
root (skipped otherwise).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncssh
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import adapter
from mgmtbench.emulator.oracle import show_commands
from mgmtbench.lab import Lab, LabLike
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.targets import Login, Target, lab_targets
from mgmtbench.testing import Driver, record, timing_info

pytestmark = pytest.mark.skipif(not has_net_admin(),
                                reason="the TCP experiment needs a lab network: run as root")

PLATFORM = "cisco_ios"
PROFILES = ("regional", "intercontinental")
CONTROLS = ("cubic", "bbr")
BULK = int(os.environ.get("MGMTBENCH_TCP_BULK_BYTES", str(4 * 1024 * 1024)))
COMMAND_ROUNDS, BULK_ROUNDS = 10, 3
Round = Callable[[], int]  # one timed round; returns the bytes it moved


@contextmanager
def https_case(target: Target, mode: str, commands: list[str]) -> Iterator[Round]:
    """One httpx mode on a connection kept from before the timed part."""
    driver = Driver(adapter("httpx")(target, mode))
    driver.setup()
    try:
        expected = driver.run(commands)  # warm-up; the answer every round must give again

        def one() -> int:
            output = driver.run(commands)
            assert len(output) == len(expected), "the device's answer changed size"
            return len(output)

        yield one
    finally:
        driver.teardown()


@contextmanager
def ssh_bulk_case(target: Target, how: str, direction: str, folder: Path) -> Iterator[Round]:
    """SFTP or SCP (asyncssh, one kept connection) of :data:`BULK` bytes in ``direction``."""
    loop = asyncio.new_event_loop()
    local, back = folder / "up.bin", folder / "down.bin"
    local.write_bytes(os.urandom(BULK))
    name = f"tcp-{how}.bin"
    conn = loop.run_until_complete(asyncssh.connect(
        target.host, target.ssh_port, username=target.username, password=target.password,
        known_hosts=str(target.known_hosts), client_keys=None))
    sftp = loop.run_until_complete(conn.start_sftp_client())
    loop.run_until_complete(sftp.put(str(local), name))  # the file to download, and a warm-up

    async def move() -> None:
        if how == "sftp":
            await (sftp.put(str(local), name) if direction == "upload"
                   else sftp.get(name, str(back)))
        else:
            await (asyncssh.scp(str(local), (conn, name)) if direction == "upload"
                   else asyncssh.scp((conn, name), str(back)))

    def one() -> int:
        loop.run_until_complete(move())
        return BULK

    try:
        yield one
        size = loop.run_until_complete(sftp.stat(name)).size
        assert size == BULK, f"the device holds {size} bytes of {BULK}"
        if direction == "download":
            assert back.read_bytes() == local.read_bytes()
    finally:
        sftp.exit()
        conn.close()
        loop.run_until_complete(conn.wait_closed())
        loop.close()


CASES: dict[str, Callable[[Target, Path], object]] = {
    "batch-post": lambda t, _: https_case(t, "batch-post", show_commands(PLATFORM, 5)),
    "multi-cmd": lambda t, _: https_case(t, "multi-cmd", show_commands(PLATFORM, 5)),
    "keep-alive": lambda t, _: https_case(t, "keep-alive", show_commands(PLATFORM, 5)),
    "show-running-config": lambda t, _: https_case(t, "keep-alive", ["show running-config"]),
    "show-interfaces": lambda t, _: https_case(t, "keep-alive", ["show interfaces"]),
    "sftp-upload": lambda t, f: ssh_bulk_case(t, "sftp", "upload", f),
    "sftp-download": lambda t, f: ssh_bulk_case(t, "sftp", "download", f),
    "scp-upload": lambda t, f: ssh_bulk_case(t, "scp", "upload", f),
    "scp-download": lambda t, f: ssh_bulk_case(t, "scp", "download", f),
}


@pytest.mark.parametrize("device_cc", CONTROLS)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("link", PROFILES)
def test_device_congestion_control(benchmark: BenchmarkFixture,
                                   lab_for: Callable[[str], LabLike], login: Login,
                                   tmp_path: Path, link: str, device_cc: str,
                                   case: str) -> None:
    lab = lab_for(f"{link}+device_cc={device_cc}")
    assert isinstance(lab, Lab), "the experiment needs a lab network"
    target = lab_targets(lab, login, platform=PLATFORM, count=1)[0]
    moved: list[int] = []
    with CASES[case](target, tmp_path) as one:  # type: ignore[attr-defined]
        rounds = BULK_ROUNDS if "load" in case else COMMAND_ROUNDS
        benchmark.group = f"tcp {link}: {case}"
        benchmark.pedantic(lambda: moved.append(one()), rounds=rounds, iterations=1)
    facts = lab.facts()
    assert lab.tcp is not None
    data = list(benchmark.stats.stats.data) if benchmark.stats else []
    record(benchmark, "lab-tcp", lab=lab, library=None, profile=link, case=case,
           device_cc=device_cc, device_cc_seen=lab.tcp.device.cc,
           client_cc_seen=lab.tcp.client.cc, bytes_per_round=moved[-1] if moved else None,
           **(timing_info(data, facts.measured_rtt_ms) if data else {}))
