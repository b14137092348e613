"""The docker device runtime for real: a private dockerd, the project's device image, containers
wired into a lab's namespace behind an impaired link.

Needs a reachable Docker daemon (``DOCKER_HOST``) and the device image (``--device-image``,
default ``mgmtbench-device:latest``). ``nox -s docker`` provides both (it installs Docker Engine if
missing, starts its own dockerd, builds the image on a local base, runs this file, stops dockerd)
and sets MGMTBENCH_REQUIRE_DOCKER=1, under which a missing daemon or image fails the tests instead
of skipping them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import httpx
import pytest
from pyroute2 import IPRoute

from mgmtbench.emulator import Credentials
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.cleanup import clean_stale
from mgmtbench.lab.netns import lab_namespaces
from mgmtbench.lab.runtimes.docker import LABEL, DockerRuntime, docker
from mgmtbench.lab.state import STATE_ROOT
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, ClientKeys
from tests.docker_support import device_image

DEVICES = 3


@pytest.fixture(scope="module")
def image(request: pytest.FixtureRequest) -> str:
    """The device image, once Docker and the image are known to be there (else skip or fail)."""
    return device_image(request)


@pytest.fixture(scope="module")
def credentials(client_keys: ClientKeys) -> Credentials:
    return Credentials(username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                       authorized_keys=client_keys.authorized_keys)


@pytest.fixture(scope="module")
def fleet(image: str, credentials: Credentials) -> Iterator[Lab]:
    """Three device containers behind a regional (30 ms) link."""
    with Lab(resolve("regional"), devices=DEVICES, runtime="docker", image=image,
             credentials=credentials, calibration_samples=10) as lab:
        yield lab


def containers(lab_id: str) -> list[str]:
    return docker("ps", "--all", "--filter", f"label={LABEL}={lab_id}",
                  "--format", "{{.Names}}").split()


def link_exists(name: str) -> bool:
    with IPRoute() as ipr:
        return bool(ipr.link_lookup(ifname=name))


# --- the devices ---------------------------------------------------------------------------------


def test_each_device_answers_with_its_own_hostname(fleet: Lab) -> None:
    assert [d.hostname for d in fleet.devices] == ["R1-001", "R1-002", "R1-003"]
    context = ssl.create_default_context(cafile=str(fleet.ca_file))
    for device in fleet.devices:
        expected = expected_output("cisco_ios", device.hostname, device.reported_ip,
                                   ["show version"])
        assert device.hostname in expected

        async def over_ssh(address: str = device.address, port: int = device.ssh_port) -> str:
            async with asyncssh.connect(address, port, username=USERNAME, password=PASSWORD,
                                        client_keys=None,
                                        known_hosts=str(fleet.known_hosts)) as conn:
                return str((await conn.run("show version", check=True)).stdout)

        assert same_output("cisco_ios", asyncio.run(over_ssh()), expected)
        with httpx.Client(verify=context, auth=(USERNAME, PASSWORD), timeout=20) as client:
            response = client.get(f"https://{device.address}:{device.https_port}"
                                  "/admin/exec/show+version")
        assert response.status_code == 200
        assert same_output("cisco_ios", response.text, expected)


def test_traffic_crosses_the_impaired_link(fleet: Lab) -> None:
    cal = fleet.calibration
    assert cal is not None
    assert cal.link_p50_ms is not None
    print(f"docker runtime over {fleet.backend_name}: configured 30 ms, link {cal.link_p50_ms:.3f}"
          f" ms, TCP echo {cal.rtt_ms:.3f} ms, connect {cal.connect_p50_ms:.3f} ms")
    assert 30 <= cal.link_p50_ms <= 30.5
    assert 30 <= cal.rtt_ms <= 31
    # A TCP connect to a device container is one round trip over the link, too.
    device = fleet.devices[-1]
    before = fleet.counters()
    start = time.perf_counter()
    context = ssl.create_default_context(cafile=str(fleet.ca_file))
    with httpx.Client(verify=context, auth=(USERNAME, PASSWORD), timeout=20) as client:
        client.get(f"https://{device.address}:{device.https_port}/admin/exec/show+clock")
    elapsed_ms = (time.perf_counter() - start) * 1000
    delta = fleet.counters() - before
    assert delta.tx_packets > 0
    assert delta.rx_packets > 0
    assert elapsed_ms >= 3 * 30  # TCP connect, TLS 1.3 handshake, the request, at least


def test_results_name_the_runtime_and_the_device_processes(fleet: Lab) -> None:
    info = fleet.facts().as_dict()
    assert info["runtime"] == "docker"
    assert info["devices"] == DEVICES
    pids = fleet.device_pids()
    assert len(pids) == DEVICES
    ours = os.readlink("/proc/self/ns/net")
    namespaces = {os.readlink(f"/proc/{pid}/ns/net") for pid in pids}
    assert len(namespaces) == DEVICES  # a namespace per container
    assert ours not in namespaces
    for pid in pids:
        assert "mgmtbench" in Path(f"/proc/{pid}/cmdline").read_text()


# --- cleanup -------------------------------------------------------------------------------------


def test_down_leaves_nothing_behind(image: str, credentials: Credentials) -> None:
    lab = Lab(resolve("campus"), runtime="docker", image=image, credentials=credentials,
              calibration_samples=3).up()
    assert lab.state is not None
    lab_id, netns, host_if = lab.state.lab_id, lab.state.netns, lab.state.host_if
    assert len(containers(lab_id)) == 1
    lab.down()
    assert containers(lab_id) == []
    assert netns not in lab_namespaces()
    assert not link_exists(host_if)
    assert not (STATE_ROOT / lab_id).exists()


CHILD = """
import sys, time
from mgmtbench.lab import Lab, resolve
with Lab(resolve("campus"), runtime="docker", image=sys.argv[1], calibration_samples=3) as lab:
    print(lab.state.lab_id, lab.state.netns, lab.state.host_if, flush=True)
    time.sleep(120)
"""


def test_after_sigkill_the_next_run_removes_the_containers(image: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, image], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline().split()
    if not line:
        child.kill()
        pytest.fail(child.communicate()[1])
    lab_id, netns, host_if = line
    os.kill(child.pid, signal.SIGKILL)
    child.communicate(timeout=10)
    assert containers(lab_id)  # the owner is gone, its device is still running
    removed = clean_stale()
    assert lab_id in removed
    assert containers(lab_id) == []
    assert netns not in lab_namespaces()
    assert not link_exists(host_if)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_image_as_compose_runs_it_answers_https(image: str, tmp_path: Path) -> None:
    """The device image as docker/compose.yaml runs it: its own MGMTBENCH_BIND (0.0.0.0) and
    credentials from the environment, HTTPS answering with the device's output (issue 17: every
    request got 404 "no device on this port"). On the host's network, since this dockerd has no
    bridge to publish ports through, on free ports; its state folder mounted to read the CA."""
    ssh_port, https_port = free_port(), free_port()
    name = f"mgmtbench-bind-check-{os.getpid()}"
    settings = {"MGMTBENCH_HOSTNAME": "R1", "MGMTBENCH_USERNAME": "admin",
                "MGMTBENCH_PASSWORD": "admin", "MGMTBENCH_ENABLE_PASSWORD": "admin",
                "MGMTBENCH_SSH_PORT": str(ssh_port), "MGMTBENCH_HTTPS_PORT": str(https_port)}
    docker("run", "--detach", "--name", name, "--network", "host",
           *[f"--env={key}={value}" for key, value in settings.items()],
           "--volume", f"{tmp_path}:/var/lib/mgmtbench", image)
    try:
        assert "MGMTBENCH_BIND=0.0.0.0" in docker("inspect", "--format", "{{json .Config.Env}}",
                                                  name)
        deadline = time.monotonic() + 60
        while not (tmp_path / "known_hosts").exists():  # written once both servers listen
            running = docker("inspect", "--format", "{{.State.Running}}", name).strip()
            if running != "true" or time.monotonic() > deadline:
                logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
                pytest.fail(f"the device did not start: {(logs.stdout + logs.stderr)[-800:]}")
            time.sleep(0.2)
        context = ssl.create_default_context(cafile=str(tmp_path / "tls" / "ca.pem"))
        with httpx.Client(verify=context, auth=("admin", "admin"), timeout=30) as client:
            answer = client.get(f"https://127.0.0.1:{https_port}/admin/exec/show+version")
        assert answer.status_code == 200, answer.text
        assert "R1 uptime is" in answer.text
    finally:
        docker("rm", "--force", name)


def test_a_missing_image_says_how_to_build_it(image: str) -> None:
    lab = Lab(resolve("local"), runtime="docker", image="mgmtbench-no-such-image:0",
              calibration_samples=3)
    with pytest.raises(UsageError, match=r"mgmtbench-no-such-image:0 is missing: build it with "
                                         r"`docker build -f docker/Dockerfile"):
        lab.up()
    assert lab.state is None  # up() tore down what it had made


def test_no_daemon_is_one_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Runs everywhere: no daemon at DOCKER_HOST gives a reason, not a traceback."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'nothing.sock'}")
    reason = DockerRuntime.unavailable()
    assert reason is not None
    assert "daemon is not reachable" in reason or "CLI is not installed" in reason
    assert "\n" not in reason
    with pytest.raises(UsageError, match="device runtime 'docker' cannot run here"):
        Lab(resolve("regional"), runtime="docker")
