"""The SSH algorithm matrix (issue 13 item 2, after a BSD ``bench.sh``): for each client x server x
key exchange x cipher x MAC both ends support, the time of a whole connection and the throughput
of 8 MB sent and received.

Per cell (:class:`~mgmtbench.clients.algorithms.Cell`), the client offers that one kex, cipher and
MAC (an AEAD cipher's MAC is ``implicit``: its MAC list is left alone) and the server offers every
name it supports; a connection made before the timed part checks that the cell was negotiated
(:meth:`~mgmtbench.clients.transfer.base.TransferClient.negotiated`). Operations:

- ``connect``: connect, log in, one exec request of ``head -c 0 /dev/zero`` (the study's
  ``ssh host 'echo -n'``: no output), its exit status, close;
- ``send``: on the connection made before the timed part, a channel to the sink ``cat >
  /dev/null`` and ``--ssh-matrix-mb`` MB into it, EOF, exit status (``mb_per_s``);
- ``receive``: a channel to the source ``head -c N /dev/zero``, every byte read (``mb_per_s``).
  Against the emulator also the client's channel window as the server saw it on the wire
  (:mod:`mgmtbench.emulator.device.windows`, read from the device's API after the rounds):
  ``client_initial_window`` and ``client_max_packet`` from its CHANNEL_OPEN,
  ``client_largest_window`` (the most it let the server have in flight), ``client_largest_adjust``,
  ``client_adjusts_per_transfer``, ``client_window_transfers``. Against ``sshd`` they are None:
  sshd shows a channel's window only in its debug log (``LogLevel DEBUG2``: the CHANNEL_OPEN's
  window and packet size, each adjust), which the matrix does not turn on, since it would log
  while being timed; the window is the client's own setting, which the emulator's records show.

Each cell is timed ``--ssh-matrix-rounds`` times (3); ``send`` and ``receive`` transfer once
untimed first (the first transfer on a new connection is the slow one, up to 3x here).

Clients (``--ssh-matrix-clients``): OpenSSH ``ssh`` (processes, a ControlMaster for send and
receive), asyncssh, paramiko, ssh2-python (libssh2) and ssh-python (libssh)
(:mod:`mgmtbench.clients.transfer`). Servers (``--ssh-matrix-servers``): the emulator and a real
OpenSSH ``sshd``, each in a lab of its own per profile (``--ssh-matrix-profiles``: local and
intercontinental by default) behind the same kind of link: device runtimes ``netns`` and
``sshd``. Without root the emulator runs on loopback (in this process) and ``sshd`` on a
loopback port as this user, for ``local`` only.

The lists are derived (:mod:`mgmtbench.clients.algorithms`): ``test_ssh_algorithm_support``
records per client and server what both support and what each lacks ("not supported by sshd"),
the report's source for the gaps. ``--ssh-matrix sampled`` (the default): at ``local`` every kex
for ``connect`` (the reference cipher and MAC), every cipher and every MAC for ``send`` and
``receive`` (the reference kex); at an impaired profile the reference cell per operation (the
window, not the cipher, decides there). ``--ssh-matrix full``: every kex x cipher x MAC for every
operation, at every profile.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients.algorithms import (
    IMPLICIT,
    Cell,
    Support,
    cells,
    compare,
    server_lists,
)
from mgmtbench.clients.transfer import TRANSFER_CLIENTS, TransferClient, transfer_client
from mgmtbench.emulator.device.windows import ChannelWindow, read_windows, summarize
from mgmtbench.emulator.options import Algorithms, SshServerOptions
from mgmtbench.errors import LabNeedsPrivileges, UsageError
from mgmtbench.lab import LabLike, open_lab
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.profiles import resolve
from mgmtbench.lab.runtimes import RUNTIMES
from mgmtbench.targets import Auth, SshAlgorithms, Target
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, ClientKeys, credentials, record
from mgmtbench.testing.options import split
from mgmtbench.testing.sshd import openssh_server

EXPERIMENT = "ssh-algorithms"
#: What a receive records of the client's window (summarize()'s key: the record's; None
#: against sshd).
WINDOW_KEYS = {"initial_window": "client_initial_window", "max_packet": "client_max_packet",
               "largest_window": "client_largest_window",
               "largest_adjust": "client_largest_adjust",
               "adjusts_per_transfer": "client_adjusts_per_transfer",
               "transfers": "client_window_transfers"}
MB = 10**6
#: The device runtime that serves each server in a lab.
RUNTIME = {"emulator": "netns", "sshd": "sshd"}


@dataclass(frozen=True)
class Case:
    """One benchmark of the matrix."""

    profile: str
    server: str
    client: str
    operation: str
    cell: Cell

    @property
    def id(self) -> str:
        return f"{self.profile}-{self.server}-{self.client}-{self.operation}-{self.cell.id}"


def _chosen(config: pytest.Config, option: str, known: tuple[str, ...] | list[str]) -> list[str]:
    wanted = split(config.getoption(option))
    if wanted == ["all"]:
        return list(known)
    unknown = set(wanted) - set(known)
    if unknown:
        raise pytest.UsageError(f"{option}: unknown {sorted(unknown)}: choose from "
                                f"{', '.join(known)} or all")
    return [k for k in known if k in wanted]


def _support(server: str, client: str) -> Support | str:
    """The pair's lists, or why there are none here (a missing library or server)."""
    cls = transfer_client(client)
    hint = cls.missing()
    if hint is not None:
        return hint
    try:
        return compare(client, cls.supported(), cls.preferred(), server, server_lists(server))
    except UsageError as exc:
        return str(exc)


def matrix_cases(config: pytest.Config) -> list[Any]:
    """Every benchmark the matrix options ask for (skipped ones say why)."""
    sample = str(config.getoption("--ssh-matrix"))
    from mgmtbench.testing.options import profiles

    found: list[Any] = []
    for profile in profiles(config, "--ssh-matrix-profiles"):
        impaired = resolve(profile).impaired
        for server in _chosen(config, "--ssh-matrix-servers", ("emulator", "sshd")):
            for client in _chosen(config, "--ssh-matrix-clients", list(TRANSFER_CLIENTS)):
                support = _support(server, client)
                if isinstance(support, str):
                    found.append(pytest.param(None, id=f"{profile}-{server}-{client}",
                                              marks=pytest.mark.skip(reason=support)))
                    continue
                for operation in ("connect", "send", "receive"):
                    chosen = cells(support, operation, sample)
                    if impaired and sample == "sampled":
                        chosen = [c for c in chosen if c == support.reference]
                    for cell in chosen:
                        case = Case(profile, server, client, operation, cell)
                        found.append(pytest.param(case, id=case.id))
    return found


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "algorithm_case" in metafunc.fixturenames:
        metafunc.parametrize("algorithm_case", matrix_cases(metafunc.config))
    if "support_pair" in metafunc.fixturenames:
        config = metafunc.config
        pairs = [(s, c) for s in _chosen(config, "--ssh-matrix-servers", ("emulator", "sshd"))
                 for c in _chosen(config, "--ssh-matrix-clients", list(TRANSFER_CLIENTS))]
        metafunc.parametrize("support_pair", pairs, ids=[f"{s}-{c}" for s, c in pairs])


# --- servers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """A server a case connects to: where, who logs in, and the lab whose facts it records."""

    host: str
    port: int
    username: str
    known_hosts: Any
    lab: LabLike | None
    facts: dict[str, Any]
    #: The device API that serves the emulator's window records (None: not the emulator).
    api_url: str | None = None

    def windows(self) -> list[ChannelWindow]:
        """The client windows the emulator's source has seen (none for another server)."""
        if self.api_url is None or self.lab is None:
            return []
        return read_windows(self.api_url, self.lab.ca_file, USERNAME, PASSWORD)

    def target(self, keys: ClientKeys, algorithms: SshAlgorithms) -> Target:
        """A key login with ``algorithms``."""
        return Target(host=self.host, ssh_port=self.port, https_port=0, username=self.username,
                      password=PASSWORD, enable_secret=SECRET, known_hosts=self.known_hosts,
                      key_file=keys.private, auth=Auth.KEY, algorithms=algorithms)


def _offering_all(server: str) -> SshServerOptions:
    names = server_lists(server)
    return SshServerOptions(algorithms=Algorithms(kex=names.kex, ciphers=names.ciphers,
                                                  macs=names.macs))


@pytest.fixture(scope="session")
def matrix_server(request: pytest.FixtureRequest, client_keys: ClientKeys,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, str],
                                                                                 Server]]:
    """``matrix_server(profile, server)``: the session's server of that kind behind a link of
    that profile, offering every name it supports."""
    config = request.config
    made: dict[tuple[str, str], Server] = {}
    with ExitStack() as stack:

        def get(profile: str, server: str) -> Server:
            if (profile, server) in made:
                return made[(profile, server)]
            if server == "sshd" and not has_net_admin():
                made[(profile, server)] = _loopback_sshd(profile, stack, client_keys,
                                                         tmp_path_factory)
                return made[(profile, server)]
            runtime = RUNTIME[server]
            reason = RUNTIMES[runtime].unavailable()
            if reason is not None:
                pytest.skip(f"{server}: {reason}")
            try:
                lab = open_lab(resolve(profile), credentials=credentials(client_keys.authorized_keys),
                               backend=str(config.getoption("--link-backend")), runtime=runtime,
                               ssh=_offering_all(server))
            except LabNeedsPrivileges as exc:
                pytest.skip(str(exc))
            except UsageError as exc:
                pytest.fail(f"{server} lab for profile {profile}: {exc}")
            stack.callback(lab.down)
            device = lab.devices[0]
            api = (f"https://{device.address}:{device.https_port}" if server == "emulator"
                   else None)
            made[(profile, server)] = Server(device.address, device.ssh_port, USERNAME,
                                             lab.known_hosts, lab, {}, api)
            return made[(profile, server)]

        yield get


def _loopback_sshd(profile: str, stack: ExitStack, keys: ClientKeys,
                   tmp: pytest.TempPathFactory) -> Server:
    """Without root: sshd on a loopback port as this user, for the unimpaired profile only."""
    if resolve(profile).impaired:
        pytest.skip(f"sshd behind an impaired link ({profile}) needs the sshd device runtime, "
                    "which needs root")
    names = server_lists("sshd")
    device = stack.enter_context(openssh_server(
        tmp.mktemp("matrix-sshd"), keys.authorized_keys, {},
        algorithms=SshAlgorithms(kex=names.kex, ciphers=names.ciphers, macs=names.macs)))
    return Server(device.host, device.port, getpass.getuser(), device.known_hosts, None,
                  {"backend": "loopback", "runtime": "sshd-loopback", "configured_rtt_ms": 0.0})


# --- the benchmarks -------------------------------------------------------------------------------


def check_negotiated(client: TransferClient, cell: Cell) -> dict[str, str]:
    """What the client's connection negotiated, asserted to be ``cell``."""
    got = client.negotiated()
    assert (got.kex, got.cipher) == (cell.kex, cell.cipher), (
        f"{client.name} negotiated {got}, not {cell}")
    if cell.mac != IMPLICIT:
        assert got.mac == cell.mac, f"{client.name} negotiated {got}, not {cell}"
    return {"kex": got.kex, "cipher": got.cipher, "mac": got.mac or IMPLICIT}


def test_ssh_algorithms(benchmark: BenchmarkFixture, algorithm_case: Case,
                        matrix_server: Callable[[str, str], Server], client_keys: ClientKeys,
                        request: pytest.FixtureRequest) -> None:
    case = algorithm_case
    config = request.config
    size = round(float(config.getoption("--ssh-matrix-mb")) * MB)
    rounds = int(config.getoption("--ssh-matrix-rounds"))
    server = matrix_server(case.profile, case.server)
    cls = transfer_client(case.client)
    client = cls(server.target(client_keys, case.cell.algorithms))
    benchmark.group = f"ssh-algorithms {case.profile} {case.operation}"
    watch = case.operation == "receive"
    seen = max((r.seq for r in server.windows()), default=0) if watch else 0
    client.open()  # untimed: and the proof that the cell is what gets negotiated
    try:
        negotiated = check_negotiated(client, case.cell)
        if case.operation == "connect":
            client.close()
            benchmark.pedantic(client.connect_once, rounds=rounds, iterations=1)
        else:  # one untimed transfer first: the first on a new connection runs cold
            transfer = client.send if case.operation == "send" else client.receive
            benchmark.pedantic(transfer, args=(size,), rounds=rounds, iterations=1,
                               warmup_rounds=1)
    finally:
        client.close()
    moved = 0 if case.operation == "connect" else size
    assert benchmark.stats is not None
    mean = benchmark.stats.stats.mean
    window = summarize([r for r in server.windows() if r.seq > seen]) if watch else None
    if watch and server.api_url is not None:
        # Every round and the warm-up read from the source once: each saw the client's window.
        assert window is not None, f"the emulator recorded no window of {case.client}"
        assert window["transfers"] == rounds + 1, window
    record(benchmark, EXPERIMENT, lab=server.lab, library=cls, profile=case.profile,
           client=case.client, server=case.server, operation=case.operation, kex=case.cell.kex,
           cipher=case.cell.cipher, mac=case.cell.mac, bytes=moved,
           mb_per_s=round(moved / MB / mean, 3) if moved else None, negotiated=negotiated,
           **(window_figures(window) if watch else {}), **server.facts)


def window_figures(window: dict[str, float] | None) -> dict[str, float | None]:
    """A receive's window figures as recorded (every key, None where nothing was seen)."""
    found = window or {}
    return {WINDOW_KEYS[key]: found.get(key) for key in WINDOW_KEYS}


def test_ssh_algorithm_support(benchmark: BenchmarkFixture,
                               support_pair: tuple[str, str]) -> None:
    """What a client and a server both support and what each lacks, recorded for the report
    (timed: the comparison of the derived lists, a formality; not compared between runs)."""
    server, client = support_pair
    cls = transfer_client(client)
    hint = cls.missing()
    if hint is not None:
        pytest.skip(hint)
    try:
        server_lists(server)
    except UsageError as exc:
        pytest.skip(str(exc))
    support = benchmark.pedantic(
        compare, args=(client, cls.supported(), cls.preferred(), server, server_lists(server)),
        rounds=1, iterations=1)
    assert support.reference is not None, f"{client} and {server} share no algorithm"
    record(benchmark, EXPERIMENT, library=cls, client=client, server=server, operation="support",
           support=support.as_dict(), compare=False)
