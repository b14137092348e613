"""The plugin's part for fleets on Dask: options, the matrix and the ``dask_cluster`` fixture.

- ``--dask-workers N`` (default 2): a local cluster of N workers, each in a network namespace of
  its own with its own labs (needs root); ``--dask-scheduler tcp://HOST:PORT``: an existing
  cluster instead; ``--dask-ssh HOST,HOST,...``: Dask's ``SSHCluster`` (the first host runs the
  scheduler, each after it a worker; ``--dask-ssh-port``, ``--dask-ssh-key``,
  ``--dask-ssh-known-hosts``, ``--dask-ssh-user``);
- the matrix of ``benchmarks/test_fleet_dask.py``: ``--dask-devices`` (fleet sizes, default
  1000) x ``--dask-clients`` (fleet runners, default asyncssh) x ``--dask-profiles`` (default
  regional); with ``--inventory`` the fleet is every host (``--sessions-per-device`` sessions
  each) shared among the workers, at ``--inventory-rate`` in all, and a local cluster is Dask's
  own ``LocalCluster`` on this host's network (its workers must reach the hosts);
  ``--dask-concurrency`` (sessions at once over the whole fleet, shared among the shards,
  default 200) and ``--dask-rounds`` (default 1). The command is ``--fleet-command``.

``dask_cluster``: the session's :class:`~mgmtbench.scaleout.cluster.Cluster`, started on first
use and stopped at the session's end; its dashboard's address is printed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from mgmtbench.errors import MgmtbenchError, UsageError
from mgmtbench.scaleout.options import ClusterOptions
from mgmtbench.testing.options import inventory, inventory_options, profiles, split

MATRIX = ("fleet_client", "fleet_devices", "fleet_profile")


def add_dask_options(parser: pytest.Parser) -> None:
    """The distributed fleet benchmark's options (their own group)."""
    group = parser.getgroup("mgmtbench fleets on Dask", "the distributed fleet benchmark")
    group.addoption("--dask-workers", type=int, default=2,
                    help="local cluster: Dask workers, each in a namespace of its own with its "
                         "own labs (default: 2)")
    group.addoption("--dask-scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="use this running Dask scheduler (and all its workers) instead")
    group.addoption("--dask-ssh", default=None, metavar="HOST,HOST,...",
                    help="Dask's SSHCluster: the scheduler on the first host, a worker on each "
                         "after it")
    group.addoption("--dask-ssh-port", type=int, default=22, help="--dask-ssh: SSH port")
    group.addoption("--dask-ssh-key", default=None, help="--dask-ssh: private key file")
    group.addoption("--dask-ssh-known-hosts", default=None,
                    help="--dask-ssh: known_hosts file (default: ~/.ssh/known_hosts, as ssh)")
    group.addoption("--dask-ssh-user", default=None, help="--dask-ssh: user name")
    group.addoption("--dask-devices", default="1000",
                    help="distributed fleet: comma-separated fleet sizes (default: 1000)")
    group.addoption("--dask-clients", default="asyncssh",
                    help="distributed fleet: fleet runners (default: asyncssh)")
    group.addoption("--dask-profiles", default="regional",
                    help="distributed fleet: link profiles (default: regional)")
    group.addoption("--dask-concurrency", type=int, default=200,
                    help="distributed fleet: sessions at once over the whole fleet, shared "
                         "among the workers (default: 200)")
    group.addoption("--dask-rounds", type=int, default=1,
                    help="distributed fleet: timed rounds (default: 1)")


def cluster_options(config: pytest.Config) -> ClusterOptions:
    """The command line's :class:`~mgmtbench.scaleout.options.ClusterOptions`."""
    option = config.getoption
    key, known = option("--dask-ssh-key"), option("--dask-ssh-known-hosts")
    return ClusterOptions(
        workers=int(option("--dask-workers")), scheduler=option("--dask-scheduler"),
        ssh=tuple(split(option("--dask-ssh") or "")), ssh_port=int(option("--dask-ssh-port")),
        ssh_key=Path(key) if key else None, ssh_known_hosts=Path(known) if known else None,
        ssh_user=option("--dask-ssh-user"), isolated=inventory(config) is None)


def check_dask_options(config: pytest.Config) -> None:
    """The options' errors, one line each, before anything is collected."""
    try:
        cluster_options(config).check()
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    _sizes(config)
    _clients(config)
    profiles(config, "--dask-profiles")
    for name in ("--dask-concurrency", "--dask-rounds"):
        if int(config.getoption(name)) < 1:
            raise pytest.UsageError(f"{name} must be at least 1, not {config.getoption(name)}")


def _sizes(config: pytest.Config) -> list[int]:
    raw = config.getoption("--dask-devices")
    try:
        sizes = [int(n) for n in split(raw)]
    except ValueError:
        raise pytest.UsageError(f"--dask-devices takes whole numbers, not {raw!r}") from None
    if not sizes or min(sizes) < 1:
        raise pytest.UsageError(f"--dask-devices takes whole numbers >= 1, not {raw!r}")
    return sizes


def _clients(config: pytest.Config) -> list[str]:
    from mgmtbench.clients.fleet import FLEET_RUNNERS

    names = split(config.getoption("--dask-clients"))
    unknown = [n for n in names if n not in FLEET_RUNNERS]
    if unknown or not names:
        raise pytest.UsageError(f"--dask-clients: no fleet runner {(unknown or [''])[0]!r}; "
                                f"known: {', '.join(FLEET_RUNNERS)}")
    return names


def generate_dask_matrix(metafunc: pytest.Metafunc) -> None:
    """Parametrise a test that asks for ``fleet_client``/``fleet_devices``/``fleet_profile``."""
    wants = set(metafunc.fixturenames) & set(MATRIX)
    config = metafunc.config
    found = inventory(config)
    if found is not None and "fleet_profile" in wants:  # the fleet: every host, each session
        sessions = len(found.hosts) * inventory_options(config).sessions_per_device
        metafunc.parametrize("fleet_profile", ["inventory"])
        metafunc.parametrize("fleet_devices", [sessions], ids=[f"{sessions}sessions"])
        wants -= {"fleet_profile", "fleet_devices"}
    if "fleet_profile" in wants:
        metafunc.parametrize("fleet_profile", profiles(config, "--dask-profiles"))
    if "fleet_devices" in wants:
        sizes = _sizes(config)
        metafunc.parametrize("fleet_devices", sizes, ids=[f"{n}dev" for n in sizes])
    if "fleet_client" in wants:
        metafunc.parametrize("fleet_client", _clients(config))


@pytest.fixture(scope="session")
def dask_cluster(request: pytest.FixtureRequest) -> Iterator[object]:
    """The session's Dask cluster (see the module docstring); skipped where it cannot run."""
    from mgmtbench.lab.lab import has_net_admin
    from mgmtbench.scaleout.cluster import open_cluster

    options = cluster_options(request.config)
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("fleets on Dask need Dask: pip install 'mgmtbench[dask]'")
    if options.kind == "local" and options.isolated and not has_net_admin():
        pytest.skip("a local Dask cluster puts each worker in a network namespace: root or "
                    "CAP_NET_ADMIN needed (or give --dask-scheduler / --dask-ssh)")
    try:
        with open_cluster(options) as cluster:
            reporter = request.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"\nDask cluster ({cluster.kind}): {len(cluster.workers)} "
                                    f"workers; dashboard {cluster.dashboard or 'not served'}")
            yield cluster
    except MgmtbenchError as exc:
        pytest.fail(str(exc), pytrace=False)
