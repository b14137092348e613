"""The plugin's edge-proxy part: its options and the ``edge_lab_for`` fixture.

- ``--proxy-profiles`` (default ``regional``): the WAN profiles the edge proxy benchmark runs at;
  ``--campus-profile`` (default ``campus``): the link from the proxy to the devices (and, for the
  tunnel, from the client to the head-end);
- ``--proxy-clients``: the proxy's clients (:data:`~mgmtbench.proxy.clients.PROXY_CLIENTS`,
  default all five: ``httpx``, ``httpx-h2``, ``httpx-async``, ``httpx-async-h2`` over HTTPS and
  ``aioquic-h3`` over HTTP/3);
- ``--proxy-concurrency`` (default ``100``): devices behind one proxy, a client session each,
  at once (``0``: no concurrency benchmark).

``edge_lab_for(wan, headend=False, devices=1)``: the session's
:class:`~mgmtbench.proxy.topology.EdgeLab` for that WAN profile, made on first use (the labs of
another WAN profile are taken down first, so a run of several profiles holds few lab indexes) with the
``--link-backend``, ``--device-runtime``, ``--device-image`` and ``--emulator-processes`` of
every lab; its devices (and the head-ends) accept the ``client_keys``. A lab with a head-end has
both: the HTTPS one and the one that talks HTTP/3 to the proxy (``edge.headend_http3``).
Skipped without root.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from mgmtbench.errors import LabNeedsPrivileges, UsageError
from mgmtbench.lab.profiles import resolve
from mgmtbench.proxy.topology import EdgeLab
from mgmtbench.testing.credentials import credentials
from mgmtbench.testing.keys import ClientKeys

DEFAULT_PROXY_CLIENTS = "httpx,httpx-h2,httpx-async,httpx-async-h2,aioquic-h3"


def add_edge_options(parser: pytest.Parser) -> None:
    """The edge proxy benchmark's options (their own group)."""
    group = parser.getgroup("mgmtbench edge proxy", "the edge proxy benchmark")
    group.addoption("--proxy-profiles", default="regional",
                    help="edge proxy: comma-separated WAN profiles (default: regional)")
    group.addoption("--campus-profile", default="campus",
                    help="edge proxy: the proxy-to-device link's profile (default: campus)")
    group.addoption("--proxy-clients", default=DEFAULT_PROXY_CLIENTS,
                    help=f"edge proxy: its clients (default: {DEFAULT_PROXY_CLIENTS})")
    group.addoption("--proxy-concurrency", type=int, default=100,
                    help="edge proxy: devices behind the proxy at once, one session each "
                         "(default: 100; 0: none)")


@pytest.fixture(scope="session")
def edge_lab_for(request: pytest.FixtureRequest,
                 client_keys: ClientKeys) -> Iterator[Callable[..., EdgeLab]]:
    """``edge_lab_for("regional", headend=False, devices=1)``: the session's edge lab."""
    labs: dict[tuple[str, bool, int], EdgeLab] = {}
    config = request.config

    def get(wan: str, headend: bool = False, devices: int = 1) -> EdgeLab:
        key = (wan, headend, devices)
        for other in [k for k in labs if k[0] != wan]:  # one WAN's labs up at a time: the
            labs.pop(other).down()  # benchmarks run a profile's cases together
        if key not in labs:
            try:
                labs[key] = EdgeLab(
                    resolve(wan), resolve(str(config.getoption("--campus-profile"))),
                    headend=headend, headend_http3=headend, devices=devices,
                    credentials=credentials(client_keys.authorized_keys),
                    authorized_keys=client_keys.authorized_keys,
                    backend=str(config.getoption("--link-backend")),
                    runtime=str(config.getoption("--device-runtime")),
                    image=str(config.getoption("--device-image")),
                    emulator_processes=int(config.getoption("--emulator-processes"))).up()
            except LabNeedsPrivileges as exc:
                pytest.skip(str(exc))
            except UsageError as exc:
                pytest.fail(f"edge lab for WAN {wan}: {exc}")
        return labs[key]

    yield get
    for made in labs.values():
        made.down()
