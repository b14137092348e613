"""Fleets on Dask: a real 2-worker run (each worker in a namespace of its own with its own lab),
checked through its merged JSON; the same through Dask's SSHCluster against a real sshd; an
inventory shared among the workers; a run closed at the barrier, a shard that cannot start, two
clusters side by side and a killed run (nothing left that `mgmtbench lab down` cannot remove);
the shard plan and the options' one-line errors."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mgmtbench.errors import ClusterError, UsageError
from mgmtbench.lab import LabLike
from mgmtbench.scaleout.cluster import Cluster, open_cluster
from mgmtbench.scaleout.fleet import DistributedFleet, plan
from mgmtbench.scaleout.hub import NETWORKS
from mgmtbench.scaleout.options import ClusterOptions
from mgmtbench.scaleout.shard import ShardSpec
from mgmtbench.targets import Login

ROOT = Path(__file__).resolve().parents[1]
LOGIN = Login("admin", "pw", "en")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="labs and namespaces need root")


def run_benchmark(tmp_path: Path, *options: str,
                  env: dict[str, str] | None = None) -> dict[str, Any]:
    """The benchmark on 30 devices, 10 at once, 2 rounds; its one row's extra_info, after
    ``mgmtbench report`` has read it."""
    out = tmp_path / "run.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "benchmarks" / "test_fleet_dask.py"),
         "-p", "no:cacheprovider", "--rootdir", str(ROOT), "-q", "-s",
         "--dask-profiles", "regional", "--dask-devices", "30", "--dask-concurrency", "10",
         "--dask-rounds", "2", *options, f"--benchmark-json={out}"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "dashboard http://" in result.stdout
    from mgmtbench.results.report import write_report

    report = write_report([out], tmp_path / "report").read_text()
    assert "## Fleets on Dask: " in report
    [bench] = json.loads(out.read_text())["benchmarks"]
    info: dict[str, Any] = bench["extra_info"]
    assert bench["stats"]["rounds"] == 2
    return info


def check_merged(info: dict[str, Any], shards: int) -> None:
    assert info["experiment"] == "fleet-dask"
    assert info["devices"] == 30
    assert info["shards"] == shards
    assert info["fleet_concurrency"] == 10
    # Every device's two outputs checked against its own, in each of the two rounds.
    assert info["checked"] == 2 * 30
    assert info["start_skew_ms"] >= 0
    for phase in ("connect_exec_ms", "finish_ms", "exec_again_ms", "read_output_ms"):
        assert info[phase] > 0
    # A round at regional: at least one connect (3 RTTs) and two commands, 30 ms each.
    assert info["makespan_ms"] > 5 * 30
    assert info["client_cpu_s"] > 0
    assert info["emulator_cpu_s"] > 0
    ranges = []
    for shard in info["shard_results"]:
        assert shard["devices"] == 15
        assert shard["checked"] == [15, 15]
        assert len(shard["start_offset_ms"]) == 2  # every round's start skew, per shard
        assert min(shard["start_offset_ms"]) >= 0
        assert shard["waves"] == 3  # 15 devices, 5 at once
        [lab] = shard["labs"]
        assert lab["devices"] == 15
        assert lab["profile"] == "regional"
        assert 29 < lab["measured_rtt_ms"] < 40
        assert lab["first"].startswith(f"S{shard['shard'] + 1}L1-")
        ranges.append(ipaddress.ip_network(lab["subnet"]))
    # Which shard drove which devices: separate labs, separate address ranges.
    assert len(set(ranges)) == shards


@needs_root
def test_a_two_worker_fleet_in_separate_namespaces(tmp_path: Path) -> None:
    info = run_benchmark(tmp_path, "--dask-workers", "2")
    assert info["cluster"] == "local"
    assert info["dask_workers"] == 2
    check_merged(info, 2)
    hosts = [s["worker"].removeprefix("tcp://").rpartition(":")[0] for s in info["shard_results"]]
    assert len(set(hosts)) == 2
    assert {ipaddress.ip_network(f"{h}/24", strict=False) for h in hosts} <= set(NETWORKS)
    namespaces = {s["netns"] for s in info["shard_results"]}
    assert len(namespaces) == 2
    assert os.readlink("/proc/self/ns/net") not in namespaces
    # Nothing left: no worker namespace, no hub, none of the shards' labs.
    netns = Path("/run/netns")
    assert not list(netns.glob("mgmtbench-*-dask*"))
    for shard in info["shard_results"]:
        assert not (netns / f"mgmtbench-{shard['labs'][0]['lab']}").exists()


@needs_root
def test_sshcluster_against_a_real_sshd(tmp_path: Path) -> None:
    from mgmtbench.testing.keys import make_key
    from mgmtbench.testing.sshd import login_server

    keys = make_key(tmp_path)
    keys.authorized_keys.write_text(keys.public.read_text())
    with login_server(tmp_path / "sshd", keys.authorized_keys) as sshd:
        info = run_benchmark(tmp_path, "--dask-ssh", "127.0.0.1,127.0.0.1,127.0.0.1",
                             "--dask-ssh-port", str(sshd.port), "--dask-ssh-key",
                             str(keys.private), "--dask-ssh-known-hosts", str(sshd.known_hosts))
    assert info["cluster"] == "ssh"
    assert info["dask_workers"] == 2
    check_merged(info, 2)
    # Scheduler, dashboard and workers on the loopback address named, no other interface.
    assert info["dask_dashboard"].startswith("http://127.0.0.1:")
    assert all(s["worker"].startswith("tcp://127.0.0.1:") for s in info["shard_results"])


@needs_root
def test_an_inventory_shared_among_workers(tmp_path: Path,
                                           lab_for: Callable[..., LabLike]) -> None:
    from mgmtbench.testing.credentials import PASSWORD, USERNAME

    lab = lab_for("regional", devices=6)
    hosts = "".join(f"        {d.hostname}: {{ansible_host: {d.address}}}\n" for d in lab.devices)
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(
        "all:\n  children:\n    lab:\n      vars:\n        ansible_network_os: cisco.ios.ios\n"
        f"        ansible_user: {USERNAME}\n        mgmtbench_known_hosts: {lab.known_hosts}\n"
        f"        mgmtbench_auth: password\n      hosts:\n{hosts}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MGMTBENCH_")}
    info = run_benchmark(tmp_path, "--inventory", str(inventory), "--dask-workers", "2",
                         "--inventory-rate", "50", env={**env, "MGMTBENCH_PASSWORD": PASSWORD})
    assert info["target"] == "inventory"
    assert info["cluster"] == "local"
    assert info["devices"] == 6
    assert info["checked"] == 2 * 6  # every host's answers against its own first ones
    assert info["paced_s"] >= 0
    drove = [set(shard["drove"]) for shard in info["shard_results"]]
    assert [len(d) for d in drove] == [3, 3]
    assert drove[0].isdisjoint(drove[1])
    assert set.union(*drove) == {f"{d.address}:22" for d in lab.devices}
    assert all(not shard["labs"] for shard in info["shard_results"])


def test_plan_shares_devices_and_sessions() -> None:
    specs = plan(workers=3, client="asyncssh", command="show version", concurrency=10,
                 login=LOGIN, devices=1001, profile="regional")
    assert [s.devices for s in specs] == [334, 334, 333]
    assert [s.concurrency for s in specs] == [4, 3, 3]
    assert len({s.run for s in specs}) == 1
    assert [s.number for s in specs] == [0, 1, 2]


def test_plan_refuses_what_cannot_be_shared() -> None:
    with pytest.raises(ClusterError, match="cannot be shared among 3"):
        plan(workers=3, client="asyncssh", command="x", concurrency=10, login=LOGIN,
             devices=2, profile="regional")
    with pytest.raises(ClusterError, match="less than one session per worker"):
        plan(workers=3, client="asyncssh", command="x", concurrency=2, login=LOGIN,
             devices=30, profile="regional")


@pytest.mark.parametrize(("options", "message"), [
    (ClusterOptions(scheduler="tcp://h:1", ssh=("a", "b")), "not both"),
    (ClusterOptions(scheduler="h:8786"), "tcp://HOST:PORT"),
    (ClusterOptions(ssh=("a",)), "at least one worker"),
    (ClusterOptions(workers=0), "1..200"),
])
def test_cluster_options_say_what_is_wrong(options: ClusterOptions, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        options.check()


def test_a_bad_option_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "benchmarks" / "test_fleet_dask.py"),
         "-p", "no:cacheprovider", "--rootdir", str(ROOT), "-q", "--dask-devices", "ten"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--dask-devices takes whole numbers" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if os.geteuid() != 0:
        pytest.skip("a local cluster's namespaces need root")
    with open_cluster(ClusterOptions(workers=2)) as made:
        yield made


def small_fleet(**overrides: Any) -> list[ShardSpec]:
    from mgmtbench.testing.credentials import PASSWORD, SECRET, USERNAME

    return plan(**{"workers": 2, "client": "asyncssh", "command": "show version",
                   "concurrency": 2, "login": Login(USERNAME, PASSWORD, SECRET), "devices": 4,
                   "profile": "local", **overrides})


def test_a_run_closed_at_the_barrier_lets_its_shards_go(cluster: Cluster) -> None:
    fleet = DistributedFleet(cluster, small_fleet()).__enter__()
    labs = [lab["lab"] for shard in fleet.prepared for lab in shard["labs"]]
    fleet.arm(1)  # both shards now wait at round 1's barrier
    start = time.monotonic()
    fleet.close()  # never released: told to give up, then taken down
    assert time.monotonic() - start < 30  # not the barrier's 600 s time-out
    assert len(labs) == 2
    for lab in labs:
        assert not Path(f"/run/netns/mgmtbench-{lab}").exists()


def test_a_shard_that_cannot_start_fails_the_run_in_one_line(cluster: Cluster) -> None:
    specs = small_fleet(client="no-such-client")
    with pytest.raises(ClusterError, match=r"shard 0 on tcp://\S+ could not be prepared: "
                                           r".*no-such-client"):
        DistributedFleet(cluster, specs).__enter__()


@needs_root
def test_two_local_clusters_side_by_side_get_networks_of_their_own() -> None:
    def where() -> str:
        return os.readlink("/proc/thread-self/ns/net")

    with open_cluster(ClusterOptions(workers=1)) as one, \
            open_cluster(ClusterOptions(workers=1)) as two:
        addresses = [c.client.scheduler.address for c in (one, two)]
        assert addresses[0].rpartition(".")[0] != addresses[1].rpartition(".")[0]
        found = {c.client.submit(where, pure=False).result() for c in (one, two)}
        assert len(found) == 2  # each worker in a namespace of its own


@needs_root
def test_a_killed_run_leaves_nothing_lab_down_cannot_remove(tmp_path: Path) -> None:
    from mgmtbench.lab.cleanup import clean

    script = tmp_path / "cluster.py"
    script.write_text(
        "import time\n"
        "from mgmtbench.scaleout.cluster import open_cluster\n"
        "from mgmtbench.scaleout.options import ClusterOptions\n"
        "with open_cluster(ClusterOptions(workers=2)) as cluster:\n"
        "    print(cluster.client.scheduler.address, flush=True)\n"
        "    time.sleep(300)\n")
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    scheduler = process.stdout.readline().strip()  # in each worker's command line
    assert scheduler.startswith("tcp://198.19.")
    mine = f"mgmtbench-{process.pid}-dask"
    assert len(list(Path("/run/netns").glob(f"{mine}*"))) == 3  # hub and two workers
    process.kill()  # no clean-up of its own
    process.wait()
    process.stdout.close()
    def workers_left() -> bool:
        return subprocess.run(["pgrep", "-f", f"dask_spec {scheduler} "], capture_output=True,
                              check=False).returncode == 0

    deadline = time.monotonic() + 60
    while workers_left() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not workers_left()  # the workers stop once their scheduler is gone
    removed = clean().labs
    assert {name for name in removed if name.startswith(f"{process.pid}-dask")} == {
        f"{process.pid}-dask1-hub", f"{process.pid}-dask1-w0", f"{process.pid}-dask1-w1"}
    assert not list(Path("/run/netns").glob(f"{mine}*"))
