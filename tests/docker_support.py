"""The device image the docker runtime's tests run, or why they cannot run here."""

from __future__ import annotations

import os

import pytest

from mgmtbench.errors import UsageError
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.runtimes.docker import DockerRuntime, docker

#: ``nox -s docker`` sets it: there a missing daemon or image fails the tests instead of
#: skipping them.
REQUIRED = os.environ.get("MGMTBENCH_REQUIRE_DOCKER") == "1"


def device_image(request: pytest.FixtureRequest) -> str:
    """The device image (``--device-image``), once Docker and the image are known to be there
    (else skip, or fail where Docker is required)."""
    name = str(request.config.getoption("--device-image"))
    reason = None
    if not has_net_admin():
        reason = "the docker runtime builds a lab network: run as root or with CAP_NET_ADMIN"
    else:
        reason = DockerRuntime.unavailable()
        if reason is None:
            try:
                docker("image", "inspect", name)
            except UsageError:
                reason = f"no image {name}: build it with `nox -s docker` or docker/Dockerfile"
    if reason is not None:
        if REQUIRED:
            pytest.fail(f"MGMTBENCH_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)
    return name
