"""A lab failure is one line from the CLI, not a traceback, and a lab touches nothing it did not
make: netlink refusing the lab's link (an interface of that name is already there) becomes a
``LabError`` whose message the CLI prints as one line.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from pyroute2 import IPRoute

from mgmtbench.errors import LabError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.lab import MAX_LABS, has_net_admin
from mgmtbench.lab.state import used_indexes

pytestmark = pytest.mark.skipif(not has_net_admin(), reason="labs need root or CAP_NET_ADMIN")


@pytest.fixture
def taken_link_names() -> Iterator[list[str]]:
    """A veth pair of ours holding the host-side name of every lab index that is free, so the
    next lab's link cannot be made (netlink: EEXIST), whichever index it picks."""
    names = [f"mgb{i}h" for i in range(MAX_LABS) if i not in used_indexes()]
    try:
        with IPRoute() as ipr:
            for name in names:
                ipr.link("add", ifname=name, kind="veth", peer=f"mgbtest{name[3:-1]}")
        yield names
    finally:
        with IPRoute() as ipr:
            for name in names:
                if ipr.link_lookup(ifname=name):
                    ipr.link("del", ifname=name)


def link_exists(name: str) -> bool:
    with IPRoute() as ipr:
        return bool(ipr.link_lookup(ifname=name))


def test_lab_up_turns_a_netlink_refusal_into_one_line(taken_link_names: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mgmtbench.cli", "lab", "check", "--profile", "local",
         "--link-backend", "none", "--samples", "3"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mgmtbench: error: the lab network could not be built: "
                               "netlink refused (File exists"), lines[0]
    assert all(link_exists(name) for name in taken_link_names)  # not the lab's to delete


def test_lab_error_in_process(taken_link_names: list[str]) -> None:
    lab = Lab(resolve("local"), backend="none", calibration_samples=3)
    with pytest.raises(LabError, match="netlink refused") as failed:
        lab.up()
    assert failed.value.__cause__ is not None  # the netlink error, for a debugger
    assert lab.state is None  # everything it made is gone
    assert all(link_exists(name) for name in taken_link_names)
