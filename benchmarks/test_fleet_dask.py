"""A fleet spread over Dask workers: client shards and their device labs, held at one barrier.

Parametrised over fleet runner x fleet size x profile (``--dask-clients``, ``--dask-devices``,
``--dask-profiles``; ids ``[asyncssh-10000dev-regional]``) on the session's cluster
(``dask_cluster``: a local one of ``--dask-workers`` workers in namespaces of their own by
default). Each worker is a shard: it brings up its own labs of the profile (up to 1,000 devices
each, hostnames ``S<shard>L<lab>-NNNN``), starts today's fleet runner in a worker process of its
own and runs one untimed warm-up wave, all before anything is timed. A round releases every shard
at once (a Dask ``Event`` set once all are armed) and each runs its devices in waves of its share
of ``--dask-concurrency``, every session running ``--fleet-command`` twice with the phases of the
concurrency benchmark, each output checked against its own device's.

With ``--inventory FILE`` the fleet is every host of the inventory (``--sessions-per-device``
sessions each, ``--limit`` applies), shared among the shards with no labs, each shard pacing its
waves at its share of ``--inventory-rate`` (time paced is recorded, ``paced_s``); each host's
answers are checked against its own first (warm-up) answers; a local cluster is then Dask's own
``LocalCluster`` on this host's network, since its workers must reach the hosts.

Timed (the benchmark's statistics): from the release to the driver holding every shard's report.
Recorded beside it: the makespan on the shards' own clocks (each corrected by its offset to the
scheduler's), the start skew, phase medians over every session, client, emulator, link and
coordinator CPU, and per shard where it ran, which devices it drove and its own figures.
"""

from __future__ import annotations

import itertools
import statistics
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench import progress
from mgmtbench.clients.fleet import fleet_runner
from mgmtbench.errors import ClusterError
from mgmtbench.scaleout.cluster import Cluster
from mgmtbench.scaleout.fleet import DistributedFleet, merge, plan
from mgmtbench.scaleout.shard import ShardSpec
from mgmtbench.targets import Login
from mgmtbench.testing import record
from mgmtbench.testing.options import inventory_options

PLATFORM = "cisco_ios"


@pytest.mark.filterwarnings("ignore:Benchmark fixture was not used")
@pytest.mark.inventory
def test_fleet_dask(benchmark: BenchmarkFixture, dask_cluster: Cluster,
                    request: pytest.FixtureRequest, login: Login, fleet_client: str,
                    fleet_devices: int, fleet_profile: str) -> None:
    cls = fleet_runner(fleet_client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    option = request.config.getoption
    command = str(option("--fleet-command"))
    share: dict[str, Any] = {"devices": fleet_devices, "profile": fleet_profile}
    site_info: dict[str, Any] = {"target": "lab"}
    if fleet_profile == "inventory":  # every host, shared among the shards: no labs
        site = request.getfixturevalue("fleet_site_for")(fleet_profile)
        reason = site.refused([command])
        if reason:
            pytest.skip(reason)
        share = {"targets": site.targets(fleet_devices, PLATFORM),
                 "rate": inventory_options(request.config).rate}
        site_info = site.record_info()
    benchmark.group = f"fleet on Dask {fleet_profile}"
    try:
        prepared, rounds = _run(benchmark, dask_cluster, request, plan(
            workers=len(dask_cluster.workers), client=fleet_client, command=command,
            concurrency=int(option("--dask-concurrency")), login=login, **share,
            backend=str(option("--link-backend")), runtime=str(option("--device-runtime")),
            image=str(option("--device-image")),
            emulator_processes=int(option("--emulator-processes"))))
    except ClusterError as exc:  # a shard's own failure, or a fleet that cannot be shared
        pytest.fail(str(exc), pytrace=False)
    figures = merge(prepared, rounds)
    labs = [lab for shard in prepared for lab in shard["labs"]]
    rtts = [lab["measured_rtt_ms"] for lab in labs if lab["measured_rtt_ms"] is not None]
    record(benchmark, "fleet-dask", lab=None, library=cls, **{
        **site_info, "client": fleet_client, "profile": fleet_profile, "command": command,
        "how": prepared[0]["hello"]["how"], "merged": prepared[0]["hello"]["merged"],
        **({"backend": labs[0]["backend"],
            "measured_rtt_ms": round(statistics.median(rtts), 3) if rtts else None} if labs
           else {}),
        "labs": len(labs), **dask_cluster.describe(), **figures})
    print(f"\n{fleet_devices} devices on {len(prepared)} shards: makespan "
          f"{figures['makespan_ms'] / 1000:.1f} s, start skew {figures['start_skew_ms']} ms, "
          f"client CPU {figures['client_cpu_s']} s, emulator {figures['emulator_cpu_s']} s, "
          f"link {figures['link_cpu_s']} s")


def _run(benchmark: BenchmarkFixture, cluster: Cluster, request: pytest.FixtureRequest,
         specs: list[ShardSpec]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """The shards prepared, then the timed rounds, each released once every shard is armed;
    what the shards prepared and each round's reports."""
    rounds: list[list[dict[str, Any]]] = []
    numbers = itertools.count(1)
    with DistributedFleet(cluster, specs) as fleet:
        def arm() -> tuple[tuple[int], dict[str, Any]]:
            number = next(numbers)
            fleet.arm(number)  # every shard waiting at the barrier: untimed
            return (number,), {}

        count = int(request.config.getoption("--dask-rounds"))
        # Rounds done on the terminal (mgmtbench.progress): counted in pedantic's untimed setup.
        with progress.rounds(f"fleet on Dask, {len(specs)} shards", count,
                             sessions=sum(s.devices or len(s.targets) for s in specs),
                             setup=arm) as counted:
            benchmark.pedantic(lambda number: rounds.append(fleet.release(number)),
                               setup=counted, rounds=count, iterations=1)
    return fleet.prepared, rounds
