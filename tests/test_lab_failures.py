"""A lab failure is one line from the CLI, not a traceback, and a lab touches nothing it did not
make: an interface named like the lab's makes it pick another index, and when none is left, that
is one line; netlink refusing the lab's link (an interface of that name appeared after the lab
picked its index) becomes a ``LabError`` whose message the CLI prints as one line.
"""

from __future__ import annotations

import errno
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.errors import LabError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.lab import MAX_LABS, has_net_admin
from mgmtbench.lab.state import used_indexes

pytestmark = pytest.mark.skipif(not has_net_admin(), reason="labs need root or CAP_NET_ADMIN")


@pytest.fixture
def taken_link_names() -> Iterator[list[str]]:
    """A veth pair of ours holding the host-side name of every lab index that is free, so the
    next lab's link cannot be made (netlink: EEXIST), whichever index it picks."""
    names: list[str] = []
    try:
        with IPRoute() as ipr:
            for i in range(MAX_LABS):
                if i in used_indexes():
                    continue
                try:
                    ipr.link("add", ifname=f"mgb{i}h", kind="veth", peer=f"mgbtest{i}")
                except NetlinkError as exc:  # a lab of another process made it meanwhile
                    if exc.code != errno.EEXIST:
                        raise
                    continue
                names.append(f"mgb{i}h")
        yield names
    finally:
        with IPRoute() as ipr:
            for name in names:
                if ipr.link_lookup(ifname=name):
                    ipr.link("del", ifname=name)


def link_exists(name: str) -> bool:
    with IPRoute() as ipr:
        return bool(ipr.link_lookup(ifname=name))


def test_no_free_index_is_one_line(taken_link_names: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mgmtbench.cli", "lab", "check", "--profile", "local",
         "--link-backend", "none", "--samples", "3"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mgmtbench: error: no lab index is free: "), lines[0]
    assert "interfaces or routes like a lab's (" in lines[0], lines[0]
    assert all(link_exists(name) for name in taken_link_names)  # not the lab's to delete


# The lab picks a free index, then an interface of its link's name appears (another tool, in
# the moment between): netlink refuses the lab's link.
RACE = textwrap.dedent("""
    import sys
    from pyroute2 import IPRoute
    from mgmtbench.cli import main
    from mgmtbench.lab.lab import Lab

    build = Lab._build

    def raced(self, index):
        with IPRoute() as ipr:
            ipr.link("add", ifname=self.state.host_if, kind="veth", peer="mgbtestrace")
        print(self.state.host_if, flush=True)
        build(self, index)

    Lab._build = raced
    sys.exit(main(sys.argv[1:]))
""")


def test_a_netlink_refusal_is_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-c", RACE, "lab", "check", "--profile", "local", "--link-backend",
         "none", "--samples", "3"], capture_output=True, text=True, timeout=120)
    taken = result.stdout.split()[0] if result.stdout.split() else None
    try:
        assert result.returncode == 2, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("mgmtbench: error: the lab network could not be built: "
                                   "netlink refused (File exists"), lines[0]
        assert taken is not None
        assert link_exists(taken)  # not the lab's to delete
    finally:
        if taken is not None and link_exists(taken):
            with IPRoute() as ipr:
                ipr.link("del", ifname=taken)


def test_lab_error_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    build, raced = Lab._build, []

    def race(lab: Lab, index: int) -> None:
        assert lab.state is not None
        with IPRoute() as ipr:
            ipr.link("add", ifname=lab.state.host_if, kind="veth", peer="mgbtestrace")
        raced.append(lab.state.host_if)
        build(lab, index)

    monkeypatch.setattr(Lab, "_build", race)
    lab = Lab(resolve("local"), backend="none", calibration_samples=3)
    try:
        with pytest.raises(LabError, match="netlink refused") as failed:
            lab.up()
        assert failed.value.__cause__ is not None  # the netlink error, for a debugger
        assert lab.state is None  # everything it made is gone
        assert link_exists(raced[0])  # not the lab's to delete
    finally:
        with IPRoute() as ipr:
            for name in raced:
                if ipr.link_lookup(ifname=name):
                    ipr.link("del", ifname=name)
