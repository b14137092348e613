"""The plugin's command-line options, and how they parametrise tests.

A test that asks for ``profile`` (and not ``concurrency``) runs once per ``--profiles`` entry; one
that also asks for ``client`` and ``mode`` runs for every (client, mode) pair an adapter supports
(``--clients``) and every ``--commands`` count; one that asks for ``concurrency`` runs for every
fleet runner (``--clients``) x ``--concurrency`` x ``--fleet-profiles``. Test ids read
``[paramiko-reuse-conn-regional-5cmd]`` and ``[asyncssh-c100-regional]``.

``--modes`` chooses the modes of the (client, mode) pairs: ``study`` (the default) is the study's
modes and our ``pipelined``, ``tls-resume`` and ``h2-multiplex``, which is what fits the default
bench in 15 minutes on 2 cores; ``all`` adds the variants that keep a shell or make a connection
per iteration (``pty-kept``, ``conn-per-iteration``, ``batch-post-fresh``, ``multi-cmd-fresh``)
and the platform-API modes (``eapi-batch``, ``nxapi-batch``); or a comma-separated list of mode
names.

``--platforms`` chooses the lab devices' platform for a test that asks for ``platform`` (the
transport benchmark): the default, ``cisco_ios``, adds no axis (ids and results as before);
anything else parametrises over the named platforms, after the profile
(``[local-arista_eos-5cmd-httpx-eapi-batch]``). A mode the platform does not serve is skipped by
the benchmark with the adapter's reason. With ``--inventory`` each host has its own platform and
``--platforms`` is refused.

``--inventory FILE`` (with ``--limit``, ``--allow-config``, ``--inventory-rate``, ...) points the
benchmarks marked ``inventory`` at an inventory's hosts (:mod:`mgmtbench.testing.sites`): their
names take the place of the profiles (``profile`` is ``inventory:r1``, the id
``[paramiko-reuse-conn-r1-5cmd]``; a fleet's profile is ``inventory``), and every other
benchmark or lab test is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mgmtbench.lab.runtimes import DEFAULT_IMAGE, RUNTIMES

if TYPE_CHECKING:
    from mgmtbench.targets.inventory import Inventory
    from mgmtbench.testing.sites import InventoryOptions
    from mgmtbench.testing.throughput import ThroughputMatrix

_INVENTORY = pytest.StashKey["Inventory | None"]()

DEFAULT_PROFILES = "local,regional,intercontinental"
DEFAULT_COMMANDS = "5"
DEFAULT_CONCURRENCY = "1,10,50,100,200"
DEFAULT_FLEET_PROFILES = "local,regional"
DEFAULT_MODES = "study"
DEFAULT_PLATFORM = "cisco_ios"
DEFAULT_MATRIX_CLIENTS = "openssh,asyncssh,paramiko"
DEFAULT_MATRIX_PROFILES = "local,intercontinental"
DEFAULT_THROUGHPUT_LINKS = "local,1000mbit"
DEFAULT_THROUGHPUT_CONNECTIONS = "1,2,5,10,20"
DEFAULT_AGENT_PROFILES = "local,regional"
DEFAULT_FLEET_COMMAND = "show interfaces"
DEFAULT_INVENTORY_RATE = 10.0
#: With ``--inventory``, tests asking for one of these (a lab, or pytest-benchmark's fixture: the
#: benchmarks that make their own labs) run only if marked ``inventory``.
LAB_FIXTURES = frozenset({"benchmark", "lab", "lab_for", "fleet_lab_for", "targets_for",
                          "site_for", "fleet_site_for"})
#: Fixture names the plugin parametrises (a test parametrising one itself is left alone).
MATRIX_NAMES = ("profile", "commands", "client", "mode", "payload", "concurrency")


def add_options(parser: pytest.Parser) -> None:
    """Register every option of the plugin in one ``mgmtbench`` group."""
    group = parser.getgroup("mgmtbench", "mgmtbench lab and benchmark matrix")
    group.addoption("--link-backend", default="auto",
                    help="lab link backend: auto (netem if the kernel has it; else tbf for a "
                         "rate-only link, tun for the rest), netem, tbf, tun or none")
    group.addoption("--device-runtime", default="netns", choices=list(RUNTIMES),
                    help="how lab devices run: netns (one emulator process in the lab's "
                         "namespace, default), docker (a container per device) or sshd (a real "
                         "OpenSSH sshd per device, SSH exec modes only)")
    group.addoption("--device-image", default=os.environ.get("MGMTBENCH_DEVICE_IMAGE",
                                                             DEFAULT_IMAGE),
                    help="device image for --device-runtime docker (default: $MGMTBENCH_DEVICE_"
                         f"IMAGE or {DEFAULT_IMAGE})")
    group.addoption("--emulator-processes", type=int, default=1,
                    help="netns runtime: emulator processes sharing a lab's devices (default: 1)")
    group.addoption("--profiles", default=DEFAULT_PROFILES,
                    help=f"comma-separated link profiles (default: {DEFAULT_PROFILES}); "
                         "all: every built-in profile")
    group.addoption("--commands", default=DEFAULT_COMMANDS,
                    help="comma-separated command counts per iteration, e.g. 1,5,10,25,50 "
                         f"(default: {DEFAULT_COMMANDS})")
    group.addoption("--clients", default="all",
                    help="comma-separated client names (default: all); a library with one "
                         "of its knobs (paramiko+tcp-nodelay); tuned: every library with knobs, "
                         "as shipped, knob by knob and +tuned")
    group.addoption("--modes", default=DEFAULT_MODES,
                    help="modes of the client x mode matrix: study (the study's modes and "
                         "pipelined, tls-resume, h2-multiplex, gNMI's fresh-get-per-cmd and "
                         "batch-get; default), all (also pty-kept, conn-per-iteration, "
                         "batch-post-fresh, multi-cmd-fresh, and eapi-batch, nxapi-batch where "
                         "--platforms serves them) or comma-separated mode names")
    group.addoption("--platforms", default=DEFAULT_PLATFORM,
                    help="transport benchmark: comma-separated platforms of the lab's devices "
                         f"(default: {DEFAULT_PLATFORM}, no platform axis); e.g. "
                         "arista_eos,cisco_nxos for the eapi-batch and nxapi-batch modes")
    group.addoption("--payloads", default="cli,yang",
                    help="what NETCONF RPCs, RESTCONF requests and gNMI paths carry: cli (the "
                         "study's CLI envelope and /cli paths), yang (modelled data), or both "
                         "(default: cli,yang); other transports carry CLI text only")
    group.addoption("--concurrency", default=DEFAULT_CONCURRENCY,
                    help="fleet benchmark: comma-separated session counts, each session to its "
                         f"own device (default: {DEFAULT_CONCURRENCY})")
    group.addoption("--fleet-size", default="1000",
                    help="fleet lab benchmark: devices in the lab (default: 1000, at most 1022)")
    group.addoption("--fleet-profiles", default=DEFAULT_FLEET_PROFILES,
                    help=f"fleet benchmark: link profiles (default: {DEFAULT_FLEET_PROFILES})")
    group.addoption("--ssh-matrix", default="sampled", choices=["sampled", "full"],
                    help="SSH algorithm matrix: sampled (every kex for connect, every cipher and "
                         "every MAC for send/receive; default) or full (every kex x cipher x MAC "
                         "for every operation)")
    group.addoption("--ssh-matrix-clients", default=DEFAULT_MATRIX_CLIENTS,
                    help="SSH algorithm matrix: comma-separated clients (openssh, asyncssh, "
                         "paramiko, ssh2, ssh-python; all) "
                         f"(default: {DEFAULT_MATRIX_CLIENTS})")
    group.addoption("--ssh-matrix-servers", default="emulator,sshd",
                    help="SSH algorithm matrix: comma-separated servers (emulator, sshd; "
                         "default: both)")
    group.addoption("--ssh-matrix-profiles", default=DEFAULT_MATRIX_PROFILES,
                    help="SSH algorithm matrix: link profiles (default: "
                         f"{DEFAULT_MATRIX_PROFILES}); at an impaired one only the reference "
                         "cell of each operation unless --ssh-matrix full")
    group.addoption("--ssh-matrix-mb", type=float, default=8.0,
                    help="SSH algorithm matrix: MB (10^6 bytes) per send/receive (default: 8)")
    group.addoption("--ssh-matrix-rounds", type=int, default=3,
                    help="SSH algorithm matrix: timed rounds per cell (default: 3)")
    group.addoption("--throughput-links", default=DEFAULT_THROUGHPUT_LINKS,
                    help="server throughput: comma-separated links, each through a lab: local "
                         "(the unimpaired veth), NNNmbit (0 ms at that rate) or a profile name; "
                         "or loopback (both servers on 127.0.0.1, no lab, no root needed) "
                         f"(default: {DEFAULT_THROUGHPUT_LINKS})")
    group.addoption("--throughput-servers", default="emulator,sshd",
                    help="server throughput: comma-separated servers (emulator, sshd; default: "
                         "both)")
    group.addoption("--throughput-ciphers", default="all",
                    help="server throughput: comma-separated ciphers (aes128-ctr, aes128-gcm, "
                         "aes256-gcm, chacha20-poly1305, or OpenSSH's full names; default: all "
                         "four)")
    group.addoption("--throughput-connections", default=DEFAULT_THROUGHPUT_CONNECTIONS,
                    help="server throughput: comma-separated numbers of concurrent transfers "
                         f"(default: {DEFAULT_THROUGHPUT_CONNECTIONS})")
    group.addoption("--throughput-mb", type=float, default=100.0,
                    help="server throughput: MB (10^6 bytes) each connection transfers "
                         "(default: 100)")
    group.addoption("--throughput-pinning", default="pinned,unpinned",
                    help="server throughput: pinned (the server on one core, the client on the "
                         "others), unpinned, or both (default)")
    group.addoption("--throughput-directions", default="upload",
                    help="server throughput: upload (to the sink, as the study; default), "
                         "download (from the source), or both")
    group.addoption("--agent-matrix", default="sampled", choices=["sampled", "full"],
                    help="ssh-agent benchmarks: sampled (every key type at 32 B and 16 KB through "
                         "the raw client, a sample for the others; ~5-8 min on 2 cores; default) "
                         "or full (every signer x key type x message size x unique/same, every "
                         "client and key type for logins)")
    group.addoption("--agent-profiles", default=DEFAULT_AGENT_PROFILES,
                    help="ssh-agent login benchmarks: link profiles (default: "
                         f"{DEFAULT_AGENT_PROFILES}; the fleet runs at the last one unless "
                         "--agent-matrix full)")
    group.addoption("--fleet-command", default=DEFAULT_FLEET_COMMAND,
                    help="fleet benchmark: the command each session runs twice (default: "
                         f"{DEFAULT_FLEET_COMMAND}, ~26 KB on cisco_ios)")
    group.addoption("--peer-netconf-server",
                    default=os.environ.get("MGMTBENCH_PEER_NETCONF_SERVER"), metavar="PATH",
                    help="emulator baseline: a binary hosting clibench's Go NETCONF server "
                         "(internal/netconfserver, v0.8) that takes -addr HOST:PORT -user -pass "
                         "-hostname -transcripts DIR, timed against the emulator's NETCONF with "
                         "the same client (default: $MGMTBENCH_PEER_NETCONF_SERVER; none: that "
                         "benchmark is skipped)")
    group.addoption("--peer-restconf-server",
                    default=os.environ.get("MGMTBENCH_PEER_RESTCONF_SERVER"), metavar="PATH",
                    help="emulator baseline: a binary hosting clibench's Go RESTCONF server "
                         "(internal/restconfserver, v0.8) that takes -addr HOST:PORT -user -pass "
                         "-hostname -transcripts DIR, timed against the emulator's RESTCONF with "
                         "the same client (default: $MGMTBENCH_PEER_RESTCONF_SERVER; none: that "
                         "benchmark is skipped)")
    group.addoption("--peer-gnmi-server",
                    default=os.environ.get("MGMTBENCH_PEER_GNMI_SERVER"), metavar="PATH",
                    help="emulator baseline: a binary hosting clibench's Go gNMI server "
                         "(internal/gnmiserver, v0.7.0) that takes -addr HOST:PORT -user -pass "
                         "-hostname -transcripts DIR -tls-cert -tls-key, timed against the "
                         "emulator's gNMI with the same client (default: "
                         "$MGMTBENCH_PEER_GNMI_SERVER; none: that benchmark is skipped)")
    group.addoption("--peer-server", default=os.environ.get("MGMTBENCH_PEER_SERVER"),
                    metavar="PATH",
                    help="emulator baseline: a clibench binary (github.com/lykinsbd/clibench, "
                         "go build ./cmd/clibench) whose Go `server` the emulator is timed "
                         "against with the same Python client (default: "
                         "$MGMTBENCH_PEER_SERVER; none: those benchmarks are skipped)")
    add_inventory_options(parser)


def add_inventory_options(parser: pytest.Parser) -> None:
    """The ``mgmtbench inventory`` group: real targets instead of a lab."""
    group = parser.getgroup("mgmtbench inventory", "mgmtbench against an inventory's hosts")
    group.addoption("--inventory", default=None, metavar="FILE",
                    help="run the benchmarks marked inventory (transport modes, concurrency) "
                         "against the hosts of FILE instead of a lab: a Nornir hosts.yaml (or "
                         "its folder), an Ansible YAML inventory, containerlab's "
                         "topology-data.json or inspect JSON, or mgmtbench's TOML; no emulator, "
                         "no impairment; other lab benchmarks are skipped")
    group.addoption("--inventory-format", default=None, metavar="NAME",
                    help="the inventory's format if it cannot be told from the file (nornir, "
                         "ansible, containerlab, toml)")
    group.addoption("--limit", default=None, metavar="PATTERN",
                    help="inventory hosts to use: comma-separated globs on name, address or "
                         "group; !PATTERN excludes (e.g. 'core,edge-*,!edge-9')")
    group.addoption("--allow-config", action="store_true",
                    help="let inventory hosts run more than show commands (configuration, files)")
    group.addoption("--ask-password", action="store_true",
                    help="prompt for the inventory's password when neither the inventory nor "
                         "MGMTBENCH_PASSWORD gives one")
    group.addoption("--inventory-rate", type=float, default=DEFAULT_INVENTORY_RATE,
                    metavar="N",
                    help="at most N new sessions per second over all inventory hosts, between "
                         f"rounds (default: {DEFAULT_INVENTORY_RATE:g})")
    group.addoption("--sessions-per-device", type=int, default=1, metavar="N",
                    help="fleet benchmark: at most N concurrent sessions per inventory host "
                         "(default: 1)")
    group.addoption("--inventory-timeout", type=float, default=None, metavar="SECONDS",
                    help="seconds for one round or probe of an inventory host without a timeout "
                         "of its own (default: 30)")


def inventory(config: pytest.Config) -> Inventory | None:
    """The ``--inventory`` (after ``--limit``), loaded once; None without one. A mistake in it is
    one line (pytest's usage error)."""
    if _INVENTORY in config.stash:
        return config.stash[_INVENTORY]
    path = config.getoption("--inventory")
    loaded = None
    if path:
        from mgmtbench.errors import UsageError
        from mgmtbench.targets.inventory import load_inventory

        try:
            loaded = load_inventory(Path(path), format=config.getoption("--inventory-format"),
                                    limit=config.getoption("--limit"),
                                    prompt=_prompt(config) if config.getoption("--ask-password")
                                    else None,
                                    timeout=config.getoption("--inventory-timeout"))
        except UsageError as exc:
            raise pytest.UsageError(f"--inventory: {exc}") from None
    config.stash[_INVENTORY] = loaded
    return loaded


def inventory_options(config: pytest.Config) -> InventoryOptions:
    """The ``--inventory-*`` safety options, checked."""
    from mgmtbench.testing.sites import InventoryOptions

    rate, per_device = config.getoption("--inventory-rate"), config.getoption(
        "--sessions-per-device")
    if rate <= 0 or per_device < 1:
        raise pytest.UsageError("--inventory-rate must be positive and --sessions-per-device at "
                                "least 1")
    return InventoryOptions(allow_config=bool(config.getoption("--allow-config")),
                            rate=float(rate), sessions_per_device=int(per_device))


def _prompt(config: pytest.Config) -> Callable[[str], str]:
    """``getpass`` with pytest's output capture suspended."""
    import getpass

    def ask(question: str) -> str:
        capture = config.pluginmanager.getplugin("capturemanager")
        if capture is None:
            return getpass.getpass(question)
        with capture.global_and_fixture_disabled():
            return getpass.getpass(question)

    return ask


def wants_inventory(config: pytest.Config, item: pytest.Item | pytest.Metafunc) -> bool:
    """Whether ``--inventory`` is given and the test is marked ``inventory``."""
    node = item.definition if isinstance(item, pytest.Metafunc) else item
    return inventory(config) is not None and node.get_closest_marker("inventory") is not None


def skip_lab_only(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--inventory``, skip the benchmarks and lab tests not marked ``inventory``."""
    if inventory(config) is None:
        return
    skip = pytest.mark.skip(reason="a lab benchmark: with --inventory only the benchmarks marked "
                                   "inventory run (transport modes, concurrency)")
    for item in items:
        uses_lab = set(getattr(item, "fixturenames", ())) & LAB_FIXTURES
        if uses_lab and item.get_closest_marker("inventory") is None:
            item.add_marker(skip)


def split(value: str) -> list[str]:
    """The non-empty items of a comma-separated option value."""
    return [v.strip() for v in value.split(",") if v.strip()]


def profiles(config: pytest.Config, option: str = "--profiles") -> list[str]:
    """The profile names of ``option`` (``all``: every built-in), each checked."""
    from mgmtbench.errors import UsageError
    from mgmtbench.lab.profiles import BUILTIN, resolve

    names = split(config.getoption(option))
    if names == ["all"]:
        names = list(BUILTIN)
    for name in names:
        try:
            resolve(name)  # a clear error for a typo, before anything starts
        except UsageError as exc:
            raise pytest.UsageError(f"{option}: {exc}") from None
    return names


def counts(config: pytest.Config, option: str) -> list[int]:
    """The whole numbers (at least 1) of ``option``."""
    try:
        found = [int(c) for c in split(config.getoption(option))]
    except ValueError:
        raise pytest.UsageError(f"{option} takes comma-separated whole numbers, not "
                                f"{config.getoption(option)!r}") from None
    if not found or min(found) < 1:
        raise pytest.UsageError(f"{option} takes numbers of at least 1")
    return found


def clients(config: pytest.Config, known: list[str], by_name: list[str] | None = None) -> list[str]:
    """The ``--clients`` among ``known`` (``all``: every one) and ``by_name`` (only when named:
    a library with one of its knobs, ``paramiko+tcp-nodelay``), in that order."""
    wanted = split(config.getoption("--clients"))
    if wanted == ["all"]:
        return known
    if wanted == ["tuned"] and by_name is not None:  # every library with knobs, one by one
        from mgmtbench.clients.registry import tuning_clients

        return tuning_clients()
    every = known + (by_name or [])
    unknown = set(wanted) - set(every)
    if unknown:
        raise pytest.UsageError(f"unknown clients {sorted(unknown)}: choose from {', '.join(known)}"
                                + (f" (or a library with a knob: {', '.join(by_name)})"
                                   if by_name else ""))
    return [c for c in every if c in wanted]


def modes(config: pytest.Config) -> frozenset[str]:
    """The mode names ``--modes`` selects (``study``, ``all`` or names), each checked."""
    from mgmtbench.clients.base import (
        GNMI_MODES,
        HTTP3_MODES,
        HTTPS_MODES,
        KEPT_VARIANTS,
        NETCONF_MODES,
        PLATFORM_API_MODES,
        RESTCONF_MODES,
        SSH_MODES,
    )

    every = (frozenset(SSH_MODES) | frozenset(HTTPS_MODES) | frozenset(NETCONF_MODES)
             | frozenset(RESTCONF_MODES) | frozenset(GNMI_MODES) | frozenset(HTTP3_MODES))
    wanted = split(config.getoption("--modes"))
    if wanted == ["all"]:
        return every
    if wanted == ["study"]:
        return every - KEPT_VARIANTS - set(PLATFORM_API_MODES)
    unknown = set(wanted) - every
    if unknown or not wanted:
        known = ", ".join(dict.fromkeys((*SSH_MODES, *HTTPS_MODES, *NETCONF_MODES,
                                         *RESTCONF_MODES, *GNMI_MODES, *HTTP3_MODES)))
        raise pytest.UsageError(f"--modes: unknown modes {sorted(unknown)}: choose study, all "
                                f"or names from {known}")
    return frozenset(wanted)


def platforms(config: pytest.Config) -> list[str]:
    """The platforms ``--platforms`` selects, each checked (a bundled platform folder)."""
    from mgmtbench.emulator.device.transcripts import available_platforms

    wanted, known = split(config.getoption("--platforms")), available_platforms()
    unknown = [p for p in wanted if p not in known]
    if unknown or not wanted:
        raise pytest.UsageError(f"--platforms: unknown platforms {unknown}: choose from "
                                f"{', '.join(known)}")
    if wanted != [DEFAULT_PLATFORM] and inventory(config) is not None:
        raise pytest.UsageError("--platforms: with --inventory each host has its own platform")
    return list(dict.fromkeys(wanted))


def payloads(config: pytest.Config) -> tuple[str, ...]:
    """The NETCONF payloads ``--payloads`` selects, each checked."""
    from mgmtbench.clients.base import PAYLOADS

    wanted = split(config.getoption("--payloads"))
    unknown = [p for p in wanted if p not in PAYLOADS]
    if unknown or not wanted:
        raise pytest.UsageError(f"--payloads: unknown payloads {unknown}: choose from "
                                f"{', '.join(PAYLOADS)}")
    return tuple(p for p in PAYLOADS if p in wanted)


def throughput_matrix(config: pytest.Config) -> ThroughputMatrix:
    """The server throughput benchmark's matrix from the ``--throughput-*`` options, each
    checked."""
    from mgmtbench.errors import UsageError
    from mgmtbench.testing.throughput import ThroughputMatrix

    try:
        return ThroughputMatrix.parse(
            links=split(config.getoption("--throughput-links")),
            servers=split(config.getoption("--throughput-servers")),
            ciphers=split(config.getoption("--throughput-ciphers")),
            directions=split(config.getoption("--throughput-directions")),
            connections=counts(config, "--throughput-connections"),
            pinning=split(config.getoption("--throughput-pinning")),
            mb=float(config.getoption("--throughput-mb")))
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def check(config: pytest.Config) -> None:
    """Check every matrix option before collection, so a typo is one line (pytest's usage error),
    not a collection error per test file."""
    profiles(config)
    profiles(config, "--fleet-profiles")
    profiles(config, "--ssh-matrix-profiles")
    profiles(config, "--agent-profiles")
    counts(config, "--commands")
    counts(config, "--concurrency")
    modes(config)
    payloads(config)
    platforms(config)
    throughput_matrix(config)
    inventory_options(config)
    inventory(config)
    from mgmtbench.clients import ADAPTERS
    from mgmtbench.clients.registry import knob_clients

    clients(config, list(ADAPTERS), knob_clients())


def _parametrised_by_test(metafunc: pytest.Metafunc) -> set[str]:
    names: set[str] = set()
    for marker in metafunc.definition.iter_markers("parametrize"):
        argnames = marker.args[0] if marker.args else marker.kwargs.get("argnames", "")
        if isinstance(argnames, str):
            names.update(n.strip() for n in argnames.split(","))
        else:
            names.update(argnames)
    return names


def generate_matrix(metafunc: pytest.Metafunc) -> None:
    """Parametrise a test over the benchmark matrix it asks for (see the module docstring)."""
    wants = set(metafunc.fixturenames)
    if _parametrised_by_test(metafunc) & set(MATRIX_NAMES):
        return
    config = metafunc.config
    hosts = inventory_profiles(config, metafunc)
    if "concurrency" in wants:
        from mgmtbench.clients.fleet import FLEET_RUNNERS

        metafunc.parametrize("profile", ["inventory"] if hosts else
                             profiles(config, "--fleet-profiles"))
        found = counts(config, "--concurrency")
        metafunc.parametrize("concurrency", found, ids=[f"c{n}" for n in found])
        if "client" in wants:
            metafunc.parametrize("client", clients(config, list(FLEET_RUNNERS)))
        return
    if "profile" not in wants:
        return
    if hosts:
        metafunc.parametrize("profile", [f"inventory:{h}" for h in hosts], ids=hosts)
    else:
        metafunc.parametrize("profile", profiles(config))
        chosen_platforms = platforms(config)
        if ("platform" in wants and chosen_platforms != [DEFAULT_PLATFORM]
                and "platform" not in _parametrised_by_test(metafunc)):
            metafunc.parametrize("platform", chosen_platforms)  # else the fixture's default
    if "client" not in wants:
        return
    from mgmtbench.clients import ADAPTERS, adapter
    from mgmtbench.clients.registry import knob_clients

    found = counts(config, "--commands")
    wanted = clients(config, list(ADAPTERS), knob_clients())
    pairs = [(c, m) for c in wanted for m in adapter(c).modes]
    if "mode" in wants and "payload" in wants:
        # A payload axis for clients that carry more than CLI text (NETCONF), named in their
        # ids only: other clients' ids stay [client-mode-...].
        chosen, carried = modes(config), payloads(config)
        triples = [(c, m, p) for c, m in pairs if m in chosen
                   for p in adapter(c).payloads if p in carried or adapter(c).payloads == ("cli",)]
        metafunc.parametrize("commands", found, ids=[f"{n}cmd" for n in found])
        metafunc.parametrize(("client", "mode", "payload"), triples,
                             ids=[f"{c}-{m}" if adapter(c).payloads == ("cli",) else f"{c}-{m}-{p}"
                                  for c, m, p in triples])
    elif "mode" in wants:
        chosen = modes(config)
        matrix = [(c, m) for c, m in pairs if m in chosen]
        metafunc.parametrize("commands", found, ids=[f"{n}cmd" for n in found])
        metafunc.parametrize(("client", "mode"), matrix, ids=[f"{c}-{m}" for c, m in matrix])
    else:
        metafunc.parametrize("client", wanted)


def inventory_profiles(config: pytest.Config, metafunc: pytest.Metafunc) -> list[str]:
    """With ``--inventory``, for a test marked ``inventory``: the host names, which take the
    place of the profiles (values ``inventory:r1``, as results record them; ids
    ``[paramiko-reuse-conn-r1-5cmd]``); else nothing."""
    found = inventory(config)
    if found is None or not wants_inventory(config, metafunc):
        return []
    return [host.name for host in found.hosts]
