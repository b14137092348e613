"""The edge proxy's chain with docker devices: client --WAN--> the proxy's namespace --campus-->
device containers. The proxy reaches the containers over SSH across the campus link, the direct
modes reach them across both links, the tunnel's head-end too, and nothing is left behind.

Needs what ``tests/test_docker_runtime.py`` needs (a reachable Docker daemon, ``DOCKER_HOST``, and
the device image, ``--device-image``); skipped without them, failed instead under
``MGMTBENCH_REQUIRE_DOCKER=1`` (``nox -s docker`` sets it).
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator

import httpx
import pytest

from mgmtbench.clients import adapter
from mgmtbench.emulator.oracle import expected_output, same_output, show_commands
from mgmtbench.lab.netns import lab_namespaces
from mgmtbench.lab.profiles import LinkProfile, resolve
from mgmtbench.lab.runtimes.docker import LABEL, docker
from mgmtbench.proxy.topology import EdgeLab
from mgmtbench.targets import Login, make_target
from mgmtbench.testing import Driver
from mgmtbench.testing.credentials import credentials
from mgmtbench.testing.keys import ClientKeys
from tests.docker_support import device_image

DEVICES = 2
WAN = LinkProfile("wan-20", 20)


@pytest.fixture(scope="module")
def image(request: pytest.FixtureRequest) -> str:
    """The device image, once Docker and the image are known to be there (else skip or fail)."""
    return device_image(request)


@pytest.fixture(scope="module")
def edge(image: str, client_keys: ClientKeys) -> Iterator[EdgeLab]:
    keys = client_keys.authorized_keys
    with EdgeLab(WAN, resolve("campus"), headend=True, access=resolve("local"),
                 devices=DEVICES, runtime="docker", image=image,
                 credentials=credentials(keys), authorized_keys=keys,
                 calibration_samples=10) as made:
        yield made


def test_both_links_are_measured_with_docker_devices(edge: EdgeLab) -> None:
    facts = edge.link_facts()
    assert edge.chain.facts().runtime == "docker"
    assert facts["wan_link_rtt_ms"] == pytest.approx(20, abs=1.0)
    assert facts["campus_link_rtt_ms"] == pytest.approx(2, abs=0.5)


def test_the_proxy_runs_commands_on_each_container(edge: EdgeLab, login: Login) -> None:
    assert edge.proxy is not None
    commands = show_commands("cisco_ios", 3)
    context = ssl.create_default_context(cafile=str(edge.proxy.trust))
    with httpx.Client(base_url=f"https://{edge.proxy.address}:{edge.proxy.port}",
                      auth=(login.username, login.password), verify=context, timeout=30,
                      trust_env=False) as client:
        for device in edge.chain.devices:
            answer = client.post(f"/device/{device.hostname}/admin/config",
                                 content="\n".join(commands).encode())
            assert answer.status_code == 200, answer.text
            assert same_output("cisco_ios", answer.text, expected_output(
                "cisco_ios", device.hostname, device.reported_ip, commands))
    assert edge.proxy_stats()["pool"]["opened"] == DEVICES  # an SSH connection per container


@pytest.mark.parametrize(("path", "client", "mode"), [
    ("direct", "asyncssh", "pty-fresh"), ("direct", "httpx", "batch-post"),
    ("tunnel", "asyncssh", "batch-exec")])
def test_direct_and_tunnel_reach_a_container(edge: EdgeLab, login: Login, path: str,
                                             client: str, mode: str) -> None:
    device = edge.chain.devices[-1] if path == "direct" else edge.chain.devices[0]
    if path == "direct":
        target = make_target(device.address, device.ssh_port, device.https_port,
                             platform="cisco_ios", login=login, ca_file=edge.chain.ca_file,
                             known_hosts=edge.chain.known_hosts)
    else:
        assert edge.headend is not None
        target = make_target(edge.headend.address, edge.headend.port, 0, platform="cisco_ios",
                             login=login, known_hosts=edge.headend.trust)
    commands = show_commands("cisco_ios", 3)
    before = edge.chain.link_counters("campus")
    driver = Driver(adapter(client)(target, mode))
    driver.setup()
    try:
        answer = driver.run(commands)
    finally:
        driver.teardown()
    assert same_output("cisco_ios", answer, expected_output(
        "cisco_ios", device.hostname, device.reported_ip, commands))
    crossed = edge.chain.link_counters("campus") - before
    assert crossed.tx_packets > 5  # the session reached the container over the campus link


def test_nothing_is_left_behind(image: str, client_keys: ClientKeys) -> None:
    lab = EdgeLab(resolve("local"), resolve("local"), devices=1, runtime="docker", image=image,
                  credentials=credentials(client_keys.authorized_keys)).up()
    try:
        names = [s.netns for s in (made.state for made in lab.chain.labs) if s is not None]
        lab_id = lab.chain.labs[-1].state.lab_id  # type: ignore[union-attr]
        assert docker("ps", "--filter", f"label={LABEL}={lab_id}", "--format",
                      "{{.Names}}").split()  # the device container is up
    finally:
        lab.down()
    assert not [n for n in names if n in lab_namespaces()]
    assert docker("ps", "--all", "--filter", f"label={LABEL}={lab_id}", "--format",
                  "{{.Names}}").split() == []
