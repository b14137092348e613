"""The edge proxy's lab: two real links (WAN to the proxy's namespace, campus to the devices),
each link's RTT measured, the direct path through the proxy's namespace, the proxy's clients in
the study's modes (HTTPS and HTTP/3), the tunnel through both head-ends, and nothing left
behind. Needs root (namespaces)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mgmtbench.clients import adapter
from mgmtbench.emulator.oracle import expected_output, same_output, show_commands
from mgmtbench.lab.facts import LabDevice
from mgmtbench.lab.netns import lab_namespaces
from mgmtbench.lab.profiles import LinkProfile, resolve
from mgmtbench.lab.state import alive
from mgmtbench.proxy.clients import PROXY_CLIENTS
from mgmtbench.proxy.topology import EdgeLab, Endpoint
from mgmtbench.targets import Login, lab_targets, make_target
from mgmtbench.testing import Driver
from mgmtbench.testing.credentials import credentials
from mgmtbench.testing.keys import ClientKeys

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root")
WAN = LinkProfile("wan-20", 20)


@pytest.fixture(scope="module")
def edge() -> Iterator[EdgeLab]:
    with EdgeLab(WAN, resolve("campus"), credentials=credentials()) as made:
        yield made


def test_both_links_are_measured(edge: EdgeLab) -> None:
    facts = edge.link_facts()
    assert facts["wan_configured_rtt_ms"] == 20
    assert facts["campus_configured_rtt_ms"] == 2
    # ICMP answered by the far namespace's kernel, timed by ours: the link's own RTT.
    assert facts["wan_link_rtt_ms"] == pytest.approx(20, abs=1.0)
    assert facts["campus_link_rtt_ms"] == pytest.approx(2, abs=0.5)
    path = edge.chain.facts()
    assert path.configured_rtt_ms == 22
    assert path.link_rtt_ms == pytest.approx(22, abs=1.0)  # end to end, through the proxy's hop
    assert path.measured_rtt_ms is not None
    assert path.measured_rtt_ms == pytest.approx(22, abs=3.0)


def test_direct_modes_cross_both_links(edge: EdgeLab, login: Login) -> None:
    target = lab_targets(edge.chain, login)[0]
    device = edge.chain.devices[0]
    commands = show_commands("cisco_ios", 2)
    want = expected_output("cisco_ios", device.hostname, device.reported_ip, commands)
    before = edge.chain.link_counters("campus")
    for client, mode in (("asyncssh", "fresh-conn"), ("httpx", "batch-post")):
        driver = Driver(adapter(client)(target, mode))
        driver.setup()
        try:
            assert same_output("cisco_ios", driver.run(commands), want)
        finally:
            driver.teardown()
    crossed = edge.chain.link_counters("campus") - before
    assert crossed.tx_packets > 20  # the direct sessions went over the campus link too
    assert crossed.rx_packets > 20


@pytest.mark.parametrize(("client", "mode"),
                         [(name, mode) for name, cls in PROXY_CLIENTS.items() for mode in cls.modes])
def test_proxy_modes(edge: EdgeLab, login: Login, client: str, mode: str) -> None:
    assert edge.proxy is not None
    proxy = make_target(edge.proxy.address, 22, edge.proxy.port, platform="cisco_ios",
                        login=login, ca_file=edge.proxy.trust, http3_port=edge.proxy.port)
    device = edge.chain.devices[0]
    commands = show_commands("cisco_ios", 3)
    want = expected_output("cisco_ios", device.hostname, device.reported_ip, commands)
    driver = Driver(PROXY_CLIENTS[client](proxy, mode, device.hostname))
    driver.setup()
    try:
        opened = edge.proxy_stats()["pool"]["opened"]
        assert all(same_output("cisco_ios", driver.run(commands), want) for _ in range(3))
        stats = edge.proxy_stats()
    finally:
        driver.teardown()
    assert stats["pool"]["opened"] - opened == (3 if mode.endswith("fresh-ssh") else 0)


def _present(names: list[str], folders: list[Path], pids: list[int], subnet: str) -> list[str]:
    found = [f"namespace {n}" for n in names if n in lab_namespaces()]
    found += [f"folder {f.name}" for f in folders if f.exists()]
    found += [f"process {p}" for p in pids if alive(p)]
    routes = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True).stdout
    found += [f"route {line.split()[0]}" for line in routes.splitlines()
              if line.startswith(subnet)]
    return found


def test_nothing_is_left_behind() -> None:
    lab = EdgeLab(resolve("local"), resolve("local"), credentials=credentials()).up()
    try:
        states = [made.state for made in lab.chain.labs]
        names = [s.netns for s in states if s is not None]
        folders = [s.folder for s in states if s is not None]
        pids = [p for s in states if s is not None for p in s.pids]
        subnet = lab.chain.labs[-1].subnet
        assert subnet is not None
        assert lab.proxy is not None
        assert lab.proxy.pid in pids  # recorded: a later run kills it after a SIGKILL
        made = _present(names, folders, pids, subnet)
        assert len(made) == 2 + 2 + len(pids) + 1  # the route to the devices, here
    finally:
        lab.down()
    assert _present(names, folders, pids, subnet) == []


def test_the_tunnel_chain_has_three_links(client_keys: ClientKeys, login: Login) -> None:
    keys = client_keys.authorized_keys
    with EdgeLab(resolve("local"), resolve("local"), headend=True, headend_http3=True,
                 access=LinkProfile("a4", 4), credentials=credentials(keys),
                 authorized_keys=keys) as lab:
        facts = lab.link_facts()
        assert [link.name for link in lab.chain.links] == ["access", "wan", "campus"]
        # ICMP p50 through the user-space delay line: it can add a scheduling delay on a busy
        # machine (4.7 ms seen in CI), never take one away
        assert 3.7 <= facts["access_link_rtt_ms"] <= 6.0
        assert lab.chain.facts().configured_rtt_ms == 4
        assert lab.headend is not None
        device = lab.chain.devices[0]
        _batch_through(lab.headend, login, device)  # ssh-https-ssh-batch
        assert lab.proxy_stats()["statuses"] == {"200": 1}  # one POST (a reading counts after)
        # ssh-http3-ssh-batch: the second head-end, HTTP/3 over the WAN to the proxy's UDP 443
        assert lab.headend_http3 is not None
        assert lab.headend_http3.port != lab.headend.port
        _batch_through(lab.headend_http3, login, device)
        stats = lab.proxy_stats()
        assert stats["http_versions"] == {"1.1": 2, "3": 1}  # the POST, a reading; the POST
        assert stats["http3"]["connections"] == 1


def _batch_through(headend: Endpoint, login: Login, device: LabDevice) -> None:
    """Three show commands as one exec (asyncssh ``batch-exec``) through ``headend``: the
    device's answer, as the oracle has it."""
    target = make_target(headend.address, headend.port, 0, platform="cisco_ios", login=login,
                         known_hosts=headend.trust)
    commands = show_commands("cisco_ios", 3)
    driver = Driver(adapter("asyncssh")(target, "batch-exec"))
    try:
        answer = driver.run(commands)
    finally:
        driver.teardown()
    assert same_output("cisco_ios", answer, expected_output(
        "cisco_ios", device.hostname, device.reported_ip, commands))
