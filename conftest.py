"""Fixtures shared by tests/ and benchmarks/: real emulators on real sockets, real labs.

- ``client_keys``: an ed25519 key pair and an authorized_keys file for public-key login.
- ``emulator_for(platform)``: a session-wide emulator per platform (read-only use: do not change
  its configuration).
- ``ios`` / ``asa``: those emulators' first device endpoints; ``endpoint`` runs a test on both.
- ``fresh_emulator``: a new emulator for a test that changes device state.
- ``lab``: a lab network for the profile given by indirect parametrisation
  (``@pytest.mark.parametrize("lab", ["regional"], indirect=True)``; default ``local``), one per
  profile for the whole session. ``--link-backend`` forces a backend; ``--device-runtime docker``
  runs the devices as containers (``--device-image``). Without root or CAP_NET_ADMIN the local
  profile runs on loopback and other profiles are skipped, saying why.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncssh
import pytest

from mgmtbench.clients import Target
from mgmtbench.emulator import Credentials, EmulatorOptions, EmulatorThread, load_platform
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.local import LocalLab
from mgmtbench.lab.profiles import resolve
from mgmtbench.lab.runtimes import DEFAULT_IMAGE, RUNTIMES

PLATFORMS = ("cisco_ios", "cisco_asa")
HOSTNAMES = {"cisco_ios": "R1", "cisco_asa": "asa1"}
USERNAME, PASSWORD, SECRET = "admin", "s3cret-pw", "en-s3cret"

logging.getLogger("asyncssh").setLevel(logging.WARNING)


@dataclass(frozen=True)
class ClientKeys:
    private: Path
    public: Path
    authorized_keys: Path


@pytest.fixture(scope="session")
def client_keys(tmp_path_factory: pytest.TempPathFactory) -> ClientKeys:
    folder = tmp_path_factory.mktemp("client-keys")
    key = asyncssh.generate_private_key("ssh-ed25519", comment="mgmtbench-test")
    private, public = folder / "id_ed25519", folder / "id_ed25519.pub"
    key.write_private_key(str(private))
    key.write_public_key(str(public))
    private.chmod(0o600)
    authorized = folder / "authorized_keys"
    authorized.write_bytes(public.read_bytes())
    return ClientKeys(private, public, authorized)


def emulator_options(platform: str, keys: ClientKeys, **overrides: object) -> EmulatorOptions:
    """Options for a test emulator: known credentials, public-key login allowed."""
    fields: dict[str, object] = {
        "hostname": HOSTNAMES[platform],
        "platform": platform,
        "credentials": Credentials(username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                                   authorized_keys=keys.authorized_keys),
    }
    fields.update(overrides)
    return EmulatorOptions(**fields)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def emulator_for(client_keys: ClientKeys) -> Iterator[Callable[[str], EmulatorThread]]:
    started: dict[str, EmulatorThread] = {}

    def get(platform: str) -> EmulatorThread:
        if platform not in started:
            started[platform] = EmulatorThread(emulator_options(platform, client_keys)).start()
        return started[platform]

    yield get
    for emu in started.values():
        emu.stop()


@pytest.fixture
def ios(emulator_for: Callable[[str], EmulatorThread]) -> DeviceEndpoint:
    return emulator_for("cisco_ios").endpoints[0]


@pytest.fixture
def asa(emulator_for: Callable[[str], EmulatorThread]) -> DeviceEndpoint:
    return emulator_for("cisco_asa").endpoints[0]


@pytest.fixture(params=PLATFORMS)
def endpoint(request: pytest.FixtureRequest,
             emulator_for: Callable[[str], EmulatorThread]) -> DeviceEndpoint:
    return emulator_for(request.param).endpoints[0]


@pytest.fixture
def fresh_emulator(client_keys: ClientKeys) -> Iterator[Callable[..., EmulatorThread]]:
    """Start emulators for one test (``fresh_emulator("cisco_asa", devices=3)``)."""
    started: list[EmulatorThread] = []

    def make(platform: str = "cisco_ios", **overrides: object) -> EmulatorThread:
        emu = EmulatorThread(emulator_options(platform, client_keys, **overrides)).start()
        started.append(emu)
        return emu

    yield make
    for emu in started:
        emu.stop()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--link-backend", default="auto",
                     help="lab link backend: auto (netem if the kernel has it, else tun), netem, "
                          "tun or none")
    parser.addoption("--device-runtime", default="netns", choices=list(RUNTIMES),
                     help="how lab devices run: netns (one emulator process in the lab's "
                          "namespace, default) or docker (a container per device)")
    parser.addoption("--device-image", default=os.environ.get("MGMTBENCH_DEVICE_IMAGE",
                                                              DEFAULT_IMAGE),
                     help="device image for --device-runtime docker (default: $MGMTBENCH_DEVICE_"
                          f"IMAGE or {DEFAULT_IMAGE})")
    parser.addoption("--emulator-processes", type=int, default=1,
                     help="netns runtime: emulator processes sharing a lab's devices (default: 1)")


LabLike = Lab | LocalLab


@pytest.fixture(scope="session")
def lab_for(request: pytest.FixtureRequest, client_keys: ClientKeys) -> Iterator[
        Callable[..., LabLike]]:
    """``lab_for("regional")``: the session's lab for that profile, made on first use;
    ``lab_for("regional", devices=200)``: a fleet lab (one lab per profile and size)."""
    labs: dict[tuple[str, int], LabLike] = {}
    backend = str(request.config.getoption("--link-backend"))
    runtime = str(request.config.getoption("--device-runtime"))
    image = str(request.config.getoption("--device-image"))
    processes = int(request.config.getoption("--emulator-processes"))
    credentials = Credentials(username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                              authorized_keys=client_keys.authorized_keys)

    def get(profile_name: str, devices: int = 1) -> LabLike:
        key = (profile_name, devices)
        if key not in labs:
            profile = resolve(profile_name)
            if not has_net_admin():
                if profile.impaired or runtime != "netns":
                    pytest.skip(f"profile {profile_name} needs a lab network: run as root or "
                                "with CAP_NET_ADMIN")
                labs[key] = LocalLab(profile, devices=devices, credentials=credentials).up()
            else:
                try:
                    labs[key] = Lab(profile, backend=backend, devices=devices,
                                    credentials=credentials, runtime=runtime, image=image,
                                    emulator_processes=processes).up()
                except UsageError as exc:
                    pytest.fail(f"lab for profile {profile_name}: {exc}")
        return labs[key]

    yield get
    for made in labs.values():
        made.down()


@pytest.fixture
def lab(request: pytest.FixtureRequest, lab_for: Callable[..., LabLike]) -> LabLike:
    return lab_for(getattr(request, "param", "local"))


def make_target(host: str, ssh_port: int, https_port: int, *, platform: str,
                ca_file: Path | None, known_hosts: Path | None, keys: ClientKeys) -> Target:
    """A client Target for a device served with the test credentials."""
    paging = load_platform(platform).style.paging_off
    return Target(host=host, ssh_port=ssh_port, https_port=https_port, username=USERNAME,
                  password=PASSWORD, enable_secret=SECRET, platform=platform, ca_file=ca_file,
                  known_hosts=known_hosts, key_file=keys.private, paging_off=paging)


@pytest.fixture
def ios_target(emulator_for: Callable[[str], EmulatorThread], client_keys: ClientKeys) -> Target:
    """The session's cisco_ios emulator as a client Target (on 127.0.0.1)."""
    emu = emulator_for("cisco_ios")
    endpoint = emu.endpoints[0]
    assert endpoint.ssh_port
    assert endpoint.https_port
    assert emu.emulator.tls
    return make_target(endpoint.host, endpoint.ssh_port, endpoint.https_port,
                       platform="cisco_ios", ca_file=emu.emulator.tls.ca,
                       known_hosts=emu.emulator.known_hosts, keys=client_keys)
