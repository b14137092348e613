"""The plugin's fixtures: real emulators on real sockets, real labs, real OpenSSH parts.

- ``client_keys``: an ed25519 key pair and an authorized_keys file for public-key login;
  ``login``: the test credentials and that key as a :class:`~mgmtbench.targets.Login`.
- ``emulator_for(platform)``: a session-wide emulator per platform (read-only use: do not change
  its configuration); ``ios`` / ``asa``: their first device endpoints; ``endpoint`` runs a test
  on both; ``ios_target``: the cisco_ios one as a client :class:`~mgmtbench.targets.Target`.
- ``fresh_emulator``: a new emulator for a test that changes device state.
- ``lab_for(profile, devices=1)``: the session's lab for that profile (and size), made on first
  use; ``lab``: one by indirect parametrisation
  (``@pytest.mark.parametrize("lab", ["regional"], indirect=True)``; default ``local``);
  ``targets_for(profile, count=None)``: client targets for a lab's devices;
  ``fleet_lab_for(profile)``: a lab with as many devices as the largest ``--concurrency``.
  ``site_for(profile)`` / ``fleet_site_for(profile)``: where a benchmark marked ``inventory``
  runs (:mod:`mgmtbench.testing.sites`): that lab, or the ``--inventory`` hosts;
  ``lab_for(profile, platform=...)`` / ``site_for(profile, platform)``: a lab whose devices are
  of that platform (default cisco_ios; the inventory's hosts keep their own).
  ``--link-backend``, ``--device-runtime``, ``--device-image`` and ``--emulator-processes`` shape
  every lab. Without root or CAP_NET_ADMIN the ``local`` profile runs on loopback and other
  profiles are skipped, saying why.
- ``sshd_device(**options)``: a real OpenSSH ``sshd`` answering the platform's show commands, with
  the bulk sink/source (:mod:`mgmtbench.emulator.ssh.bulk`), scp and sftp.
- ``ssh_agent``: a real ``ssh-agent``; ``agent_key(kind)`` loads a new key of that kind into it.
- ``user_keys``: a key pair of every kind (ed25519, ecdsa-p256/p384/p521, rsa-2048/4096) and one
  authorized_keys file holding them all, made once per session (for ``lab_for(...,
  authorized_keys=...)``, ``sshd_device(authorized_keys=...)``, emulator credentials).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from mgmtbench.emulator import EmulatorOptions, EmulatorThread, available_platforms, load_platform
from mgmtbench.emulator.oracle import expected_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.errors import LabNeedsPrivileges, UsageError
from mgmtbench.lab import LabLike, open_lab, watchdog
from mgmtbench.lab.profiles import resolve
from mgmtbench.targets import Login, Target, lab_targets, make_target
from mgmtbench.targets.safety import Pacer
from mgmtbench.testing.agent import SshAgent
from mgmtbench.testing.agent import ssh_agent as start_agent
from mgmtbench.testing.credentials import PASSWORD, SECRET, USERNAME, credentials
from mgmtbench.testing.keys import ClientKeys, KeySet, make_key, make_keys
from mgmtbench.testing.options import counts, inventory, inventory_options
from mgmtbench.testing.sites import InventoryOptions, InventorySite, LabSite, Site
from mgmtbench.testing.sshd import SshdDevice, openssh_server

logging.getLogger("asyncssh").setLevel(logging.WARNING)

#: The bundled platforms (a folder each under transcripts/): ``endpoint`` runs a test on each.
PLATFORMS = tuple(available_platforms())


def hostname_for(platform: str) -> str:
    """The hostname a test device of ``platform`` gets (the platform's default)."""
    return load_platform(platform).style.default_hostname


@pytest.fixture(scope="session")
def client_keys(tmp_path_factory: pytest.TempPathFactory) -> ClientKeys:
    """An ed25519 key pair whose public half every test device accepts."""
    return make_key(tmp_path_factory.mktemp("client-keys"))


@pytest.fixture(scope="session")
def user_keys(tmp_path_factory: pytest.TempPathFactory) -> KeySet:
    """A key pair of every kind and an authorized_keys file that lists them all (session-wide;
    an RSA-4096 key takes a second or two to make)."""
    return make_keys(tmp_path_factory.mktemp("user-keys"))


@pytest.fixture(scope="session")
def login(client_keys: ClientKeys) -> Login:
    """The test credentials (password login) with the client key for key-based clients."""
    return Login(username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                 key_file=client_keys.private)


def emulator_options(platform: str, keys: ClientKeys, **overrides: Any) -> EmulatorOptions:
    """Options for a test emulator: known credentials, public-key login allowed."""
    fields: dict[str, Any] = {"hostname": hostname_for(platform), "platform": platform,
                              "credentials": credentials(keys.authorized_keys)}
    fields.update(overrides)
    return EmulatorOptions(**fields)


@pytest.fixture(scope="session")
def emulator_for(client_keys: ClientKeys) -> Iterator[Callable[[str], EmulatorThread]]:
    """``emulator_for(platform)``: the session's emulator for that platform."""
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
    """The session's cisco_ios device."""
    return emulator_for("cisco_ios").endpoints[0]


@pytest.fixture
def asa(emulator_for: Callable[[str], EmulatorThread]) -> DeviceEndpoint:
    """The session's cisco_asa device."""
    return emulator_for("cisco_asa").endpoints[0]


@pytest.fixture(params=PLATFORMS)
def endpoint(request: pytest.FixtureRequest,
             emulator_for: Callable[[str], EmulatorThread]) -> DeviceEndpoint:
    """Each bundled platform's session device in turn."""
    return emulator_for(request.param).endpoints[0]


@pytest.fixture
def fresh_emulator(client_keys: ClientKeys) -> Iterator[Callable[..., EmulatorThread]]:
    """Start emulators for one test (``fresh_emulator("cisco_asa", devices=3)``)."""
    started: list[EmulatorThread] = []

    def make(platform: str = "cisco_ios", **overrides: Any) -> EmulatorThread:
        emu = EmulatorThread(emulator_options(platform, client_keys, **overrides)).start()
        started.append(emu)
        return emu

    yield make
    for emu in started:
        emu.stop()


def emulator_target(emu: EmulatorThread, login: Login, index: int = 0) -> Target:
    """Device ``index`` of an emulator (on loopback) as a client target."""
    endpoint = emu.endpoints[index]
    assert endpoint.ssh_port
    assert endpoint.https_port
    assert emu.emulator.tls
    return make_target(endpoint.host, endpoint.ssh_port, endpoint.https_port,
                       platform=endpoint.device.platform.style.name, login=login,
                       ca_file=emu.emulator.tls.ca, known_hosts=emu.emulator.known_hosts,
                       netconf_port=endpoint.netconf_port or endpoint.ssh_port,
                       gnmi_port=endpoint.gnmi_port or 0, http3_port=endpoint.http3_port)


@pytest.fixture
def ios_target(emulator_for: Callable[[str], EmulatorThread], login: Login) -> Target:
    """The session's cisco_ios emulator as a client Target (on 127.0.0.1)."""
    return emulator_target(emulator_for("cisco_ios"), login)


@pytest.fixture(scope="session")
def lab_for(request: pytest.FixtureRequest, client_keys: ClientKeys) -> Iterator[
        Callable[..., LabLike]]:
    """``lab_for("regional")``: the session's lab for that profile, made on first use;
    ``lab_for("regional", devices=200)``: a fleet lab (one lab per profile and size);
    ``lab_for("regional", authorized_keys=path)``: one whose devices accept the public keys in
    that file instead of ``client_keys`` (a lab per file too); ``lab_for("local",
    platform="arista_eos")``: devices of that platform, with its default hostname (a lab per
    platform)."""
    labs: dict[tuple[str, int, Path | None, str], LabLike] = {}
    config = request.config

    def get(profile_name: str, devices: int = 1, authorized_keys: Path | None = None,
            platform: str = "cisco_ios") -> LabLike:
        key = (profile_name, devices, authorized_keys, platform)
        if key not in labs:
            try:
                labs[key] = open_lab(
                    resolve(profile_name), devices=devices, platform=platform,
                    hostname=hostname_for(platform),
                    credentials=credentials(authorized_keys or client_keys.authorized_keys),
                    backend=str(config.getoption("--link-backend")),
                    runtime=str(config.getoption("--device-runtime")),
                    image=str(config.getoption("--device-image")),
                    emulator_processes=int(config.getoption("--emulator-processes")))
            except LabNeedsPrivileges as exc:
                pytest.skip(str(exc))
            except UsageError as exc:
                pytest.fail(f"lab for profile {profile_name}: {exc}")
        watchdog.use(labs[key])  # checked after the test (the plugin's watchdog)
        return labs[key]

    yield get
    for made in labs.values():
        made.down()


@pytest.fixture
def lab(request: pytest.FixtureRequest, lab_for: Callable[..., LabLike]) -> LabLike:
    """The lab of the profile given by indirect parametrisation (default ``local``)."""
    return lab_for(getattr(request, "param", "local"))


@pytest.fixture(scope="session")
def fleet_lab_for(request: pytest.FixtureRequest,
                  lab_for: Callable[..., LabLike]) -> Callable[[str], LabLike]:
    """``fleet_lab_for("regional")``: the session's fleet lab for that profile, with as many
    devices as the largest ``--concurrency``."""
    size = max(counts(request.config, "--concurrency"))
    return lambda profile: lab_for(profile, devices=size)


@pytest.fixture(scope="session")
def targets_for(lab_for: Callable[..., LabLike], login: Login) -> Callable[..., list[Target]]:
    """``targets_for("regional", count=None, platform="cisco_ios")``: targets for a lab's
    devices."""
    def get(profile: str, count: int | None = None, platform: str = "cisco_ios") -> list[Target]:
        lab = lab_for(profile, devices=count or 1)
        return lab_targets(lab, login, platform=platform, count=count)

    return get


@pytest.fixture(scope="session")
def site_for(request: pytest.FixtureRequest, lab_for: Callable[..., LabLike],
             login: Login) -> Callable[..., Site]:
    """``site_for(profile, platform="cisco_ios")``: where a benchmark marked ``inventory`` runs:
    the session's lab for that profile (its devices of ``platform``), or with ``--inventory`` the
    inventory host ``inventory:<name>`` (the matrix puts the hosts in place of profiles; it keeps
    its own platform), measured once per session."""
    found = inventory(request.config)
    if found is None:
        return lambda profile, platform="cisco_ios": LabSite(
            lab_for(profile, platform=platform), login)
    options = inventory_options(request.config)
    pacer = _pacer(request.config, options)
    sites: dict[str, InventorySite] = {}

    def get(profile: str, platform: str = "cisco_ios") -> InventorySite:
        name = profile.removeprefix("inventory:")
        if name not in sites:
            sites[name] = InventorySite(found, (found.host(name),), options, pacer)
        return sites[name]

    return get


@pytest.fixture(scope="session")
def fleet_site_for(request: pytest.FixtureRequest, fleet_lab_for: Callable[[str], LabLike],
                   login: Login) -> Callable[[str], Site]:
    """``fleet_site_for(profile)``: the session's fleet lab for that profile, or with
    ``--inventory`` every inventory host (after ``--limit``) as one fleet."""
    found = inventory(request.config)
    if found is None:
        return lambda profile: LabSite(fleet_lab_for(profile), login)
    options = inventory_options(request.config)
    site = InventorySite(found, found.hosts, options, _pacer(request.config, options))
    return lambda profile: site


_PACER = pytest.StashKey[Pacer]()


def _pacer(config: pytest.Config, options: InventoryOptions) -> Pacer:
    """The session's one pacer: ``--inventory-rate`` is a total over every inventory site."""
    if _PACER not in config.stash:
        config.stash[_PACER] = Pacer(options.rate)
    return config.stash[_PACER]


@pytest.fixture
def sshd_device(tmp_path: Path, client_keys: ClientKeys) -> Iterator[Callable[..., SshdDevice]]:
    """``sshd_device(platform="cisco_ios", host_key_type="ed25519", algorithms=None)``: a real
    OpenSSH sshd answering the platform's show commands with the transcript text, and the bulk
    sink/source, scp and sftp with OpenSSH's own programs in its ``files`` folder (public-key
    login with ``client_keys``, or the keys of an ``authorized_keys=path`` option; stopped after
    the test)."""
    with ExitStack() as stack:
        started = iter(range(1_000))

        def start(platform: str = "cisco_ios", **options: Any) -> SshdDevice:
            hostname = hostname_for(platform)
            style = load_platform(platform).style
            outputs = {command: expected_output(platform, hostname, "198.18.0.1", [command])
                       for command in style.show_commands}
            options.setdefault("file_systems", (style.file_system,))
            folder = tmp_path / f"sshd-{next(started)}"
            keys = options.pop("authorized_keys", None) or client_keys.authorized_keys
            return stack.enter_context(openssh_server(folder, keys, outputs, **options))

        yield start


@pytest.fixture
def ssh_agent(tmp_path: Path) -> Iterator[SshAgent]:
    """A real ``ssh-agent`` for one test, holding no key yet."""
    with start_agent(tmp_path / "agent") as agent:
        yield agent


@pytest.fixture
def agent_key(ssh_agent: SshAgent, tmp_path: Path) -> Callable[[str], ClientKeys]:
    """``agent_key("rsa-4096")``: a new key of that kind, loaded into ``ssh_agent``."""
    def add(kind: str = "ed25519") -> ClientKeys:
        folder = tmp_path / f"agent-key-{kind}"
        folder.mkdir(exist_ok=True)
        keys = make_key(folder, kind)
        ssh_agent.add(keys.private)
        return keys

    return add
