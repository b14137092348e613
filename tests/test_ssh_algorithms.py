"""The SSH algorithm matrix: lists derived from the libraries and servers, cells that really get
negotiated, transfers that really move their bytes, the report's averages across runs, and a tiny
real run of the benchmark.

Real servers on real sockets: the emulator (in this process, offering every name it supports)
and a real OpenSSH ``sshd`` on loopback; every transfer client installed here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mgmtbench.clients.algorithms import (
    IMPLICIT,
    AlgorithmLists,
    Cell,
    Support,
    cells,
    compare,
    server_lists,
)
from mgmtbench.clients.transfer import TRANSFER_CLIENTS, TransferClient, transfer_client
from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.device.windows import ChannelWindow, read_windows, summarize
from mgmtbench.emulator.options import Algorithms
from mgmtbench.emulator.ssh.bulk import source_command
from mgmtbench.targets import Auth, SshAlgorithms, Target
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, ClientKeys
from mgmtbench.testing.sshd import SshdDevice

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "test_ssh_algorithms.py"


def support(client: str, server: str) -> Support:
    cls = transfer_client(client)
    return compare(client, cls.supported(), cls.preferred(), server, server_lists(server))


def available(client: str) -> type[TransferClient]:
    cls = transfer_client(client)
    hint = cls.missing()
    if hint is not None:
        pytest.skip(hint)
    return cls


# --- the derived lists ---------------------------------------------------------------------------


def test_asyncssh_and_the_emulator_share_the_common_names() -> None:
    found = support("asyncssh", "emulator")
    assert "curve25519-sha256" in found.common.kex
    assert "aes128-ctr" in found.common.ciphers
    assert "hmac-sha2-256" in found.common.macs
    # The same library on both ends: nothing is missing on either side.
    assert found.missing == ()
    # AEAD ciphers, as asyncssh marks them.
    assert {"chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com"} <= found.common.aead
    assert "aes128-ctr" not in found.common.aead


@pytest.mark.parametrize("client", list(TRANSFER_CLIENTS))
@pytest.mark.parametrize("server", ["emulator", "sshd"])
def test_what_one_side_lacks_is_reported(client: str, server: str) -> None:
    cls = available(client)
    ours, theirs = cls.supported(), server_lists(server)
    found = support(client, server)
    reported = {(m.list, m.name): m.missing_at for m in found.missing}
    for which in ("kex", "ciphers", "macs"):
        mine, its = set(ours.names(which)), set(theirs.names(which))
        assert set(found.common.names(which)) == mine & its
        for name in mine - its:
            assert reported[(which, name)] == server
        for name in its - mine:
            assert reported[(which, name)] == client
        assert not {n for (w, n) in reported if w == which} & (mine & its)
    assert all(str(m) == f"{m.name}: not supported by {m.missing_at}" for m in found.missing)


def test_a_post_quantum_kex_only_openssh_has_is_not_supported_by_asyncssh() -> None:
    """OpenSSH's sntrup761x25519 (where this OpenSSH has it) is one asyncssh lacks."""
    found = support("asyncssh", "sshd")
    sntrup = [n for n in server_lists("sshd").kex if n.startswith("sntrup")]
    if not sntrup:
        pytest.skip("this OpenSSH has no sntrup761x25519 key exchange")
    lacking = {m.name for m in found.missing if m.missing_at == "asyncssh"}
    assert set(sntrup) <= lacking
    assert not set(sntrup) & set(found.common.kex)


def test_cells_sampled_and_full_with_aead_macs_implicit() -> None:
    lists = AlgorithmLists(("k1", "k2", "k3"), ("aead1", "c1", "c2"), ("m1", "m2"),
                           frozenset({"aead1"}))
    found = compare("client", lists, lists, "server", lists)
    assert found.reference == Cell("k1", "c1", "m1")  # AEAD is never the reference cipher
    assert cells(found, "connect") == [Cell(k, "c1", "m1") for k in ("k1", "k2", "k3")]
    assert cells(found, "send") == [Cell("k1", "aead1", IMPLICIT), Cell("k1", "c1", "m1"),
                                    Cell("k1", "c2", "m1"), Cell("k1", "c1", "m2")]
    full = cells(found, "receive", "full")
    assert len(full) == 3 * (1 + 2 * 2)  # an AEAD cipher once per kex, not once per MAC
    assert Cell("k2", "aead1", IMPLICIT) in full
    assert not [c for c in full if c.cipher == "aead1" and c.mac != IMPLICIT]
    assert Cell("k1", "aead1", IMPLICIT).algorithms == SshAlgorithms(kex=("k1",),
                                                                     ciphers=("aead1",))


def test_a_missing_name_on_one_side_is_reported_not_dropped() -> None:
    client = AlgorithmLists(("pq", "k"), ("c",), ("m",))
    server = AlgorithmLists(("k", "old"), ("c",), ("m",))
    found = compare("lib", client, client, "srv", server)
    assert found.common.kex == ("k",)
    assert [str(m) for m in found.missing] == ["pq: not supported by srv",
                                               "old: not supported by lib"]
    assert found.as_dict()["not_supported_by"] == {"srv": {"kex": ["pq"]},
                                                   "lib": {"kex": ["old"]}}


# --- real connections: negotiated as asked, bytes moved ----------------------------------------


def emulator_target(emu: EmulatorThread, keys: ClientKeys, algorithms: SshAlgorithms) -> Target:
    endpoint = emu.endpoints[0]
    assert endpoint.ssh_port
    return Target(host=endpoint.host, ssh_port=endpoint.ssh_port, https_port=0,
                  username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                  known_hosts=emu.emulator.known_hosts, key_file=keys.private, auth=Auth.KEY,
                  algorithms=algorithms)


def sshd_target(device: SshdDevice, keys: ClientKeys, algorithms: SshAlgorithms) -> Target:
    return Target(host=device.host, ssh_port=device.port, https_port=0, username=device.user,
                  password="", enable_secret="", known_hosts=device.known_hosts,
                  key_file=keys.private, auth=Auth.KEY, algorithms=algorithms)


def everything(server: str) -> dict[str, tuple[str, ...]]:
    names = server_lists(server)
    return {"kex": names.kex, "ciphers": names.ciphers, "macs": names.macs}


@pytest.fixture
def emulator_offering_all(fresh_emulator: Callable[..., EmulatorThread]) -> EmulatorThread:
    return fresh_emulator("cisco_ios", algorithms=Algorithms(**everything("emulator")))


@pytest.fixture
def make_target(request: pytest.FixtureRequest, client_keys: ClientKeys) -> Callable[
        [str, SshAlgorithms], Target]:
    """``make_target(server, algorithms)``: the emulator or an sshd, offering all they support."""
    def make(server: str, algorithms: SshAlgorithms) -> Target:
        if server == "emulator":
            emu = request.getfixturevalue("emulator_offering_all")
            return emulator_target(emu, client_keys, algorithms)
        start = request.getfixturevalue("sshd_device")
        device = start(algorithms=SshAlgorithms(**everything("sshd")))
        return sshd_target(device, client_keys, algorithms)

    return make


def not_the_default(found: Support) -> Cell:
    """A cell that the client's default preference would not pick: second choices."""
    common = found.common
    plain = [c for c in common.ciphers if c not in common.aead]
    return Cell(common.kex[1], plain[1], common.macs[1])


@pytest.mark.openssh
@pytest.mark.parametrize("client", list(TRANSFER_CLIENTS))
@pytest.mark.parametrize("server", ["emulator", "sshd"])
def test_the_requested_cell_is_what_gets_negotiated(
        client: str, server: str, make_target: Callable[[str, SshAlgorithms], Target]) -> None:
    cls = available(client)
    found = support(client, server)
    aead = sorted(found.common.aead)
    for cell in (not_the_default(found), *([Cell(found.common.kex[0], aead[0], IMPLICIT)]
                                          if aead else [])):
        transfer = cls(make_target(server, cell.algorithms))
        transfer.open()
        try:
            got = transfer.negotiated()
        finally:
            transfer.close()
        assert (got.kex, got.cipher) == (cell.kex, cell.cipher)
        assert got.mac == ("" if cell.mac == IMPLICIT else cell.mac)


@pytest.mark.parametrize("client", list(TRANSFER_CLIENTS))
def test_send_and_receive_move_every_byte(client: str, emulator_offering_all: EmulatorThread,
                                          client_keys: ClientKeys) -> None:
    """The emulator counts what its sink read and its source wrote: exactly what was asked."""
    cls = available(client)
    counts = emulator_offering_all.endpoints[0].ssh_counts
    transfer = cls(emulator_target(emulator_offering_all, client_keys, SshAlgorithms()))
    size = 3 * 10**6 + 7  # not a whole number of chunks
    transfer.connect_once()
    transfer.open()
    try:
        before = (counts.sink_bytes, counts.source_bytes)
        transfer.send(size)
        transfer.receive(size)
        assert (counts.sink_bytes, counts.source_bytes) == (before[0] + size, before[1] + size)
    finally:
        transfer.close()


# --- the client's window, as the emulator sees it --------------------------------------------------


def windows_of(emu: EmulatorThread) -> list[ChannelWindow]:
    """The emulator's window records, read through its device API (HTTPS, a real socket)."""
    endpoint = emu.endpoints[0]
    assert emu.emulator.tls is not None
    return read_windows(f"https://{endpoint.host}:{endpoint.https_port}", emu.emulator.tls.ca,
                        USERNAME, PASSWORD)


@pytest.mark.parametrize(("window", "packet"), [(1 << 20, 16384), (3 * 10**5, 32768)])
def test_the_source_sees_the_window_a_client_grants(window: int, packet: int,
                                                    emulator_offering_all: EmulatorThread,
                                                    client_keys: ClientKeys) -> None:
    """asyncssh as the client, its window and packet size set: the CHANNEL_OPEN's values come
    back exactly, and it never grants more than its window (it tops it up when half is used)."""
    import asyncio

    import asyncssh

    endpoint = emulator_offering_all.endpoints[0]
    size = 5 * 10**6

    async def receive() -> int:
        async with asyncssh.connect(
                endpoint.host, endpoint.ssh_port, username=USERNAME,
                client_keys=[str(client_keys.private)],
                known_hosts=str(emulator_offering_all.emulator.known_hosts), window=window,
                max_pktsize=packet) as conn:
            result = await conn.run(source_command(size), encoding=None, check=True)
            return len(result.stdout or b"")

    assert asyncio.run(receive()) == size
    records = windows_of(emulator_offering_all)
    assert len(records) == 1
    seen = records[0]
    print(f"\nasyncssh window={window} max_pktsize={packet}: the emulator saw {seen}")
    assert (seen.initial_window, seen.max_packet, seen.sent) == (window, packet, size)
    assert seen.largest_window == window
    # Each adjust tops up at most a window; together they cover all but the first window.
    assert seen.adjusts * seen.largest_adjust >= size - window
    assert window // 2 <= seen.largest_adjust <= window


@pytest.mark.parametrize("client", list(TRANSFER_CLIENTS))
def test_every_clients_window_is_recorded_per_receive(client: str,
                                                      emulator_offering_all: EmulatorThread,
                                                      client_keys: ClientKeys) -> None:
    cls = available(client)
    transfer = cls(emulator_target(emulator_offering_all, client_keys, SshAlgorithms()))
    size = 3 * 10**6
    transfer.open()
    try:
        transfer.send(size)  # the sink records nothing
        transfer.receive(size)
        transfer.receive(size)
    finally:
        transfer.close()
    records = windows_of(emulator_offering_all)
    print(f"\n{client}: {records}")
    assert [r.seq for r in records] == [1, 2]
    assert all(r.sent == size for r in records)
    assert records[0].initial_window == records[1].initial_window > 0
    # RFC 4254 sizes: a packet of data at least, at most the 32-bit field.
    assert all(1024 <= r.max_packet <= 2**32 - 1 for r in records)
    assert all(r.largest_window >= r.initial_window for r in records)
    summary = summarize(records)
    assert summary is not None
    assert summary["transfers"] == 2


def test_a_failing_command_is_an_error(emulator_offering_all: EmulatorThread,
                                       client_keys: ClientKeys) -> None:
    from mgmtbench.errors import ClientError

    transfer = transfer_client("asyncssh")(
        emulator_target(emulator_offering_all, client_keys, SshAlgorithms()))
    with pytest.raises(ClientError, match="exit status 1"):
        transfer.connect_once("show no-such-thing")
    transfer.close()


# --- the report: averages across runs, top N, heatmaps, what is not supported -------------------


def bench(run_mean_s: float, **extra: Any) -> dict[str, Any]:
    cell = "-".join(str(extra.get(k)) for k in ("profile", "server", "client", "operation",
                                                 "kex", "cipher", "mac"))
    return {"name": f"test_ssh_algorithms[{cell}]", "group": "ssh-algorithms",
            "fullname": "benchmarks/test_ssh_algorithms.py::test_ssh_algorithms",
            "params": {}, "stats": {"min": run_mean_s, "max": run_mean_s, "mean": run_mean_s,
                                    "median": run_mean_s, "stddev": 0.0001, "q1": run_mean_s,
                                    "q3": run_mean_s, "iqr": 0.0, "rounds": 3},
            "extra_info": {"experiment": "ssh-algorithms", "measured_rtt_ms": 0.1, **extra}}


def cell_row(seconds: float, operation: str, kex: str, cipher: str, mac: str) -> dict[str, Any]:
    size = 0 if operation == "connect" else 8 * 10**6
    return bench(seconds, profile="local", server="sshd", client="openssh", operation=operation,
                 kex=kex, cipher=cipher, mac=mac, bytes=size,
                 mb_per_s=round(size / 10**6 / seconds, 3) if size else None)


def write_run(path: Path, when: str, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"datetime": when, "commit_info": {"id": "abc"},
                                "machine_info": {"node": "ci"}, "benchmarks": rows}))
    return path


@pytest.fixture
def two_runs(tmp_path: Path) -> list[Path]:
    support_row = bench(0.001, server="sshd", client="openssh", operation="support",
                        compare=False, support={
                            "common": {"kex": ["k1"], "ciphers": ["c1"], "macs": ["m1"]},
                            "aead": [], "not_supported_by": {"sshd": {"kex": ["pq-kex"]}}})
    first = [cell_row(0.010, "connect", "kexA", "c1", "m1"),
             cell_row(0.030, "connect", "kexB", "c1", "m1"),
             cell_row(0.080, "send", "kexA", "fast-cipher", "m1"),   # 100 MB/s
             cell_row(0.160, "send", "kexA", "slow-cipher", "m1"),   # 50 MB/s
             support_row]
    second = [cell_row(0.030, "connect", "kexA", "c1", "m1"),
              cell_row(0.010, "connect", "kexB", "c1", "m1"),
              cell_row(0.005, "connect", "kexC", "c1", "m1"),  # only in this run
              cell_row(0.160, "send", "kexA", "fast-cipher", "m1"),  # 50 MB/s
              cell_row(0.160, "send", "kexA", "slow-cipher", "m1"),  # 50 MB/s
              support_row]
    return [write_run(tmp_path / "0001_first.json", "2026-11-20T10:00:00", first),
            write_run(tmp_path / "0002_second.json", "2026-11-21T10:00:00", second)]


def table_after(text: str, heading: str) -> list[list[str]]:
    """The rows of the Markdown table that follows ``heading`` (cells stripped, header first)."""
    lines = text[text.index(heading):].splitlines()[1:]
    while lines and not lines[0].startswith("|"):
        lines.pop(0)
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_report_averages_every_run_and_ranks_the_top_n(two_runs: list[Path],
                                                         tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", *map(str, two_runs),
                           "--out", str(out), "--top", "2"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    text = (out / "report.md").read_text()
    assert "## SSH algorithms" in text
    connect = table_after(text, "Fastest connect (top 2 of 3)")
    header = connect[0]
    rows = [dict(zip(header, row, strict=True)) for row in connect[1:]]
    # kexA and kexB average to 20 ms over two runs each; kexC ran once at 5 ms and leads.
    assert [(r["rank"], r["kex"], r["mean_ms"], r["runs"]) for r in rows] == [
        ("1", "kexC", "5.00", "1"), ("2", "kexA", "20.00", "2")]
    send = table_after(text, "Fastest send (top 2 of 2)")
    rows = [dict(zip(send[0], row, strict=True)) for row in send[1:]]
    # fast-cipher: 80 and 160 ms, 120 ms on average: 8 MB / 0.12 s; slow-cipher 160 ms both times.
    assert [(r["cipher"], r["mean_ms"], r["mb_per_s"]) for r in rows] == [
        ("fast-cipher", "120.00", "66.67"), ("slow-cipher", "160.00", "50.00")]
    assert (out / "algorithms_local_openssh_sshd_connect.png").stat().st_size > 0
    assert "![algorithms_local_openssh_sshd_send](algorithms_local_openssh_sshd_send.png)" in text
    unsupported = table_after(text, "### Not supported")
    assert ["openssh", "sshd", "kex", "sshd", "pq-kex"] in unsupported
    # The support record is a fact, not a measurement: left out of the run-against-run part.
    assert "4 benchmarks in common" in text


def test_report_shows_receive_throughput_beside_the_window(tmp_path: Path) -> None:
    """Per profile and client: receive MB/s against each server, the emulator's record of the
    window, and the window per measured RTT (what it allows at most)."""
    window = {"client_initial_window": 2 * 2**20, "client_max_packet": 32768,
              "client_largest_window": 3 * 2**20, "client_largest_adjust": 2**20,
              "client_adjusts_per_transfer": 4.0, "client_window_transfers": 4}
    rows = []
    for profile, rtt_ms, seconds in (("local", 0.1, 0.08), ("intercontinental", 150.0, 0.8)):
        for server, extra in (("emulator", window), ("sshd", {})):
            row = bench(seconds, profile=profile, server=server, client="paramiko",
                        operation="receive", kex="k1", cipher="aes128-ctr", mac="m1",
                        bytes=8 * 10**6, mb_per_s=8 / seconds, **extra)
            row["extra_info"]["measured_rtt_ms"] = rtt_ms
            rows.append(row)
    run = write_run(tmp_path / "0001_windows.json", "2026-11-22T10:00:00", rows)
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", str(run), "--out",
                           str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    table = table_after((out / "report.md").read_text(),
                        "### Receive throughput and the client's window")
    found = {row[0]: dict(zip(table[0], row, strict=True)) for row in table[1:]}
    assert set(found) == {"local", "intercontinental"}
    far = found["intercontinental"]
    assert (far["emulator MB/s"], far["sshd MB/s"]) == ("10.0", "10.0")
    assert (far["initial window KiB"], far["largest window KiB"], far["max packet"]) == (
        "2048", "3072", "32768")
    assert far["window / RTT MB/s"] == f"{3 * 2**20 / 1e6 / 0.150:.1f}"  # 21.0
    assert found["local"]["window / RTT MB/s"] == "-"  # below 1 ms the bound means nothing


def test_section_without_every_run_uses_the_latest(two_runs: list[Path], tmp_path: Path) -> None:
    from mgmtbench.results.load import load_runs
    from mgmtbench.results.sections import ReportContext
    from mgmtbench.results.sections.algorithms import render

    latest = load_runs([two_runs[1]])
    section = render(latest, ReportContext(tmp_path))
    text = "\n".join(section.lines)
    rows = table_after(text, "Fastest connect (top 3 of 3)")
    assert [row[1] for row in rows[1:]] == ["kexC", "kexB", "kexA"]
    assert all(row[-1] == "1" for row in rows[1:])  # one run each


# --- a tiny real run of the benchmark ------------------------------------------------------------


def test_benchmark_runs_and_records_the_cell(pytester: pytest.Pytester) -> None:
    found = support("asyncssh", "emulator")
    ref = found.reference
    assert ref is not None
    out = pytester.path / "run.json"
    keyword = f"support or ({ref.kex} and {ref.cipher} and {ref.mac.partition('@')[0]})"
    result = pytester.runpytest_subprocess(
        str(BENCHMARK), "-p", "no:cacheprovider", "--rootdir", str(ROOT),
        "--ssh-matrix-profiles", "local", "--ssh-matrix-clients", "asyncssh",
        "--ssh-matrix-servers", "emulator", "--ssh-matrix-mb", "0.5",
        "--ssh-matrix-rounds", "1", "-k", keyword, "--benchmark-json", str(out))
    result.assert_outcomes(passed=4)
    rows = {b["extra_info"]["operation"]: b["extra_info"]
            for b in json.loads(out.read_text())["benchmarks"]}
    assert set(rows) == {"connect", "send", "receive", "support"}
    for operation in ("connect", "send", "receive"):
        info = rows[operation]
        assert info["experiment"] == "ssh-algorithms"
        assert (info["client"], info["server"], info["profile"]) == ("asyncssh", "emulator",
                                                                     "local")
        assert (info["kex"], info["cipher"], info["mac"]) == (ref.kex, ref.cipher, ref.mac)
        assert info["negotiated"] == {"kex": ref.kex, "cipher": ref.cipher, "mac": ref.mac}
        assert "asyncssh" in info["versions"]
    assert rows["connect"]["mb_per_s"] is None
    assert rows["send"]["mb_per_s"] > 0
    assert rows["receive"]["bytes"] == 500_000
    # The emulator saw asyncssh's window on the round and the warm-up; a send records none.
    assert rows["receive"]["client_initial_window"] == 2 * 2**20  # asyncssh's default
    assert rows["receive"]["client_window_transfers"] == 2
    assert "client_initial_window" not in rows["send"]
    assert rows["support"]["compare"] is False
    assert "curve25519-sha256" in rows["support"]["support"]["common"]["kex"]
