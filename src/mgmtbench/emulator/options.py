"""What an emulator serves: devices, credentials, ports, algorithms and limits."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, replace
from pathlib import Path

from mgmtbench.emulator.device.clock import TRANSCRIPT_MOMENT, parse_start
from mgmtbench.emulator.device.filesystem import DEFAULT_SIZE
from mgmtbench.errors import UsageError

HOST_KEY_TYPES = {
    "ed25519": "ssh-ed25519",
    "ecdsa": "ecdsa-sha2-nistp256",
    "rsa": "ssh-rsa",
}
#: Seconds of ``--processing-delay`` at most: past a minute per command every client's own
#: time-out (Netmiko's, scrapli's, ncclient's) fires first.
MAX_DELAY = 60.0
#: Login methods the SSH server can offer (keyboard-interactive asks for the password).
AUTH_METHODS = ("password", "publickey", "keyboard-interactive")


@dataclass(frozen=True)
class Credentials:
    """Who may log in: one user with a password and/or public keys, and the enable secret."""

    username: str = "admin"
    password: str = "admin"
    enable_secret: str = "admin"
    authorized_keys: Path | None = None  # OpenSSH authorized_keys file for public-key auth


@dataclass(frozen=True)
class Limits:
    """Protection against bad clients; every limit gives a device-style refusal, not a crash.

    Defaults are a real device's or a real server's (named per field); every one is a
    ``mgmtbench serve`` flag (``--max-sessions`` ...) and documented in the README.
    """

    # Logged-in SSH connections per device; connections still logging in do not count.
    max_sessions: int = 1000
    # Unauthenticated SSH connections per device, OpenSSH's MaxStartups start:rate:full
    # (default 10:30:100): from `start` on, a new one is dropped with `rate` % probability,
    # rising linearly to 100 % at `full`.
    max_startups: tuple[int, int, int] = (10, 30, 100)
    # Unauthenticated SSH connections per source address (OpenSSH's PerSourceMaxStartups,
    # which OpenSSH leaves unset): 9 here, one below MaxStartups' start, so that one address
    # alone never makes other addresses' connections drop at random, while tools that log in a
    # batch at a time under sshd's MaxStartups (8 at once, like mgmtbench's own) get through.
    max_startups_per_source: int = 9
    login_timeout: float = 120.0  # seconds to log in (IOS `ip ssh time-out 120`, OpenSSH
    #                               LoginGraceTime 120)
    auth_tries: int = 3  # failed logins per SSH connection (IOS `ip ssh authentication-retries 3`)
    auth_failure_delay: float = 1.0  # seconds before a failed login is answered (IOS `login
    #                                  delay`'s 1 s); one source's failures are answered in turn
    max_channels: int = 10  # open sessions (channels) per SSH connection (OpenSSH MaxSessions 10)
    max_body: int = 1024 * 1024  # bytes of a POST /admin/config body
    max_line: int = 4096  # characters of one command line
    # Output of one command (`show bulk-output` goes up to 256 MiB) and of one request (SSH
    # exec, HTTPS GET or POST); long output is made while it is sent, at the pace the client
    # reads it, and never held whole.
    max_output: int = 256 * 1024 * 1024
    max_request_output: int = 256 * 1024 * 1024
    max_commands: int = 1000  # commands in one SSH exec request or HTTPS GET
    max_config_lines: int = 10_000  # lines of one POST /admin/config body
    # Bytes of a device's running configuration (its lines' text, indentation aside): a line
    # that would add past it is refused, whichever way it comes (CLI, POST, NETCONF, RESTCONF,
    # gNMI). 4 MiB: ~130,000 lines of 32 bytes, past the largest real configurations
    # (a service-provider edge's run to a few MB), and ~100 MB of the emulator's memory.
    max_config_size: int = 4 * 1024 * 1024
    # HTTPS: seconds a connection may wait for a request's headers (idle keep-alive included;
    # nginx's keepalive_timeout 75 s), and Apache mod_reqtimeout's body=20,MinRate=500: 20 s for
    # a request body, one more second per 500 bytes received.
    https_idle_timeout: float = 75.0
    tls_handshake_timeout: float = 60.0  # nginx's ssl_handshake_timeout 60 s
    body_timeout: float = 20.0
    body_min_rate: int = 500
    # Open HTTPS connections per device, and from one source address (nginx's limit_conn per
    # address, unset there): over either, a new connection is closed at accept, before any TLS
    # work. As many as SSH sessions in all; a quarter of them per address, so one address
    # alone never fills the device while a client's pool (httpx's and aiohttp's default: 100
    # connections) fits twice over.
    max_https_connections: int = 1000
    max_https_connections_per_source: int = 250
    # Open HTTP/3 (QUIC) connections per device, as its HTTPS connections: a new one over it is
    # refused in its first packet (CONNECTION_REFUSED), before any TLS work. Its handshake has
    # ``tls_handshake_timeout`` and it closes after ``https_idle_timeout`` idle (QUIC's idle
    # time-out), as an HTTPS connection.
    max_http3_connections: int = 1000
    # Concurrent requests (bidirectional streams) per HTTP/3 connection (nginx's
    # http3_max_concurrent_streams 128, aioquic's own).
    max_http3_streams: int = 128
    # Bytes a device's file system (flash:, disk0:) holds, in memory: SCP/SFTP writes beyond it
    # fail with "No space left on device".
    file_system_size: int = DEFAULT_SIZE

    def __post_init__(self) -> None:
        """Every limit checked, in one line naming its flag (:func:`check_limits`)."""
        check_limits(self)


#: Limits that may be 0 (no delay, no extension, no file system); every other one is at least 1
#: (a count) or above 0 (seconds): a 0 time-out closes every connection at once, a 0 cap
#: refuses everything.
ZERO_ALLOWED = frozenset({"auth_failure_delay", "body_min_rate", "file_system_size"})
#: Seconds any time-out or delay may be, at most (a day): past it, a time-out is a hang (an
#: infinite one overflows the event loop's timer).
MAX_SECONDS = 86_400.0


def flag_name(name: str) -> str:
    """The ``mgmtbench serve`` flag of an option's field: login_timeout -> --login-timeout."""
    return "--" + name.replace("_", "-")


def check_seconds(name: str, value: object, *, zero: bool = False,
                  most: float = MAX_SECONDS) -> None:
    """``value`` is a finite number of seconds above 0 (``zero``: or 0), at most ``most``;
    otherwise a one-line :class:`~mgmtbench.errors.UsageError` naming the flag."""
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not (0 <= value <= most) or (value == 0 and not zero):  # NaN fails all of them
        least = "0" if zero else "above 0"
        raise UsageError(f"{flag_name(name)} {value!r}: give seconds, {least} up to {most:g}")


def check_clock_start(value: str | None) -> None:
    """``--clock-start``: None (the host's time), ``transcript`` or an ISO 8601 time; otherwise a
    one-line :class:`~mgmtbench.errors.UsageError`."""
    if value is None:
        return
    try:
        parse_start(value)
    except ValueError:
        raise UsageError(f"--clock-start {value!r}: give an ISO 8601 time "
                         f"(2026-11-22T14:03:11Z, UTC without a zone) or {TRANSCRIPT_MOMENT!r} "
                         "(the transcripts' moment)") from None


def check_limits(limits: Limits) -> None:
    """Each of ``limits`` in range: seconds by :func:`check_seconds`, counts whole numbers of at
    least 1 (0 where :data:`ZERO_ALLOWED`), MaxStartups' START <= FULL and RATE a percentage."""
    for name in limits.__dataclass_fields__:
        value = getattr(limits, name)
        zero = name in ZERO_ALLOWED
        if isinstance(value, float):
            check_seconds(name, value, zero=zero)
        elif isinstance(value, int) and not isinstance(value, bool) and value < (0 if zero else 1):
            raise UsageError(f"{flag_name(name)} {value}: give a whole number of at least "
                             f"{0 if zero else 1}")
    start, rate, full = limits.max_startups
    if not (1 <= start <= full and 0 <= rate <= 100):
        raise UsageError(f"--max-startups {start}:{rate}:{full}: give START:RATE:FULL with "
                         "1 <= START <= FULL and RATE a percentage, like OpenSSH's 10:30:100")


@dataclass(frozen=True)
class Algorithms:
    """SSH algorithm lists offered by the server (None: the platform's, as its real image offers
    them by default: ``[ssh]`` in its ``platform.toml``; asyncssh's if it has none)."""

    kex: tuple[str, ...] | None = None
    ciphers: tuple[str, ...] | None = None
    macs: tuple[str, ...] | None = None
    compression: tuple[str, ...] = ("none",)
    # What the server signs the key exchange with: names its host key can sign with (an RSA
    # host key: rsa-sha2-256, rsa-sha2-512, ssh-rsa). None: the platform's for its own host key
    # type, every one the key has for another type.
    host_key_algs: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SshServerOptions:
    """How a device's SSH server negotiates: algorithm lists, host key type, login methods.

    One value for every way devices are served: ``mgmtbench serve`` builds it from its flags,
    a lab hands it to its runtime, which passes it on as :meth:`flags` (the ``serve`` command line
    of the netns runtime) or as their ``MGMTBENCH_*`` environment equivalents (docker).
    """

    algorithms: Algorithms = field(default_factory=Algorithms)
    host_key_type: str | None = None  # None: the platform's (rsa on cisco_ios and cisco_asa)
    # Offered only when the credentials allow it too (a password, authorized keys).
    auth_methods: tuple[str, ...] = AUTH_METHODS
    # The privilege level a shell starts at (1: host>, 15: host#); None: the platform's
    # ``login_privilege``.
    login_privilege: int | None = None

    def flags(self) -> dict[str, str]:
        """The ``mgmtbench serve`` flags that give these options (defaults left out)."""
        algs = self.algorithms
        values = {"--kex": algs.kex, "--ciphers": algs.ciphers, "--macs": algs.macs,
                  "--host-key-algs": algs.host_key_algs,
                  "--auth-methods": None if self.auth_methods == AUTH_METHODS
                  else self.auth_methods}
        flags = {flag: ",".join(names) for flag, names in values.items() if names is not None}
        if self.host_key_type is not None:
            flags["--host-key"] = self.host_key_type
        if self.login_privilege is not None:
            flags["--login-privilege"] = str(self.login_privilege)
        return flags

    def environment(self) -> dict[str, str]:
        """:meth:`flags` as the environment ``mgmtbench serve`` reads (MGMTBENCH_KEX=...)."""
        return {env_name(flag): value for flag, value in self.flags().items()}


def env_name(flag: str) -> str:
    """The environment variable that sets a ``mgmtbench serve`` flag: --ssh-port ->
    MGMTBENCH_SSH_PORT."""
    return "MGMTBENCH_" + flag.removeprefix("--").upper().replace("-", "_")


@dataclass(frozen=True)
class EmulatorOptions:
    """Everything ``mgmtbench serve`` and the test fixtures configure."""

    hostname: str = "R1"
    platform: str = "cisco_ios"
    devices: int = 1
    bind: str = "127.0.0.1"
    # One address per device (a lab's fleet): device i listens on addresses[i], all on the same
    # ports. Empty: every device on ``bind``, device i on port + i.
    addresses: tuple[str, ...] = ()
    ssh_port: int = 0  # 0: any free port; with N devices, device i gets port + i
    https_port: int = 0
    credentials: Credentials = field(default_factory=Credentials)
    limits: Limits = field(default_factory=Limits)
    algorithms: Algorithms = field(default_factory=Algorithms)
    host_key_type: str | None = None  # None: the platform's ([ssh] host_key)
    auth_methods: tuple[str, ...] = AUTH_METHODS  # offered if the credentials allow them
    processing_delay: float = 0.0  # seconds of device CPU time per command
    transcripts: Path | None = None  # None: the bundled transcripts
    state_dir: Path | None = None  # where the CA, keys and known_hosts go (None: a temp dir)
    ssh: bool = True
    https: bool = True
    # NETCONF (RFC 6242): the ``netconf`` subsystem on the SSH port and on ``netconf_port``
    # (0: any free port; None: only on the SSH port), on platforms whose models it writes.
    netconf: bool = True
    netconf_port: int | None = 0
    # gNMI (gRPC with TLS, the HTTPS API's certificate and credentials) on ``gnmi_port`` (0: any
    # free port; a lab's devices: 9339), on platforms whose models it writes.
    gnmi: bool = True
    gnmi_port: int = 0
    # The HTTPS API over HTTP/3 (QUIC, UDP) on ``http3_port``: None for the HTTPS port's number
    # (as a real server announces h3 on its own port), 0 for any free port; off without HTTPS.
    http3: bool = True
    http3_port: int | None = None
    # Accept gNMI calls without credentials (clibench's Go client sends none); calls that carry
    # them are still checked. Off: a device's behaviour, UNAUTHENTICATED.
    gnmi_anonymous: bool = False
    # Explicit hostnames, one per device (a shard of a larger fleet); empty: derived from hostname.
    names: tuple[str, ...] = ()
    # The privilege level an SSH shell starts at: 15 lands at host#, 1 at host> (enable needed);
    # None: the platform's ``login_privilege`` (cisco_ios 15, cisco_asa 1).
    login_privilege: int | None = None
    # TLS versions the HTTPS API offers ("TLSv1.2", "TLSv1.3"); empty: the platform's
    # ([https] tls_versions: TLS 1.2 on cisco_ios and cisco_asa).
    tls_versions: tuple[str, ...] = ()
    # The platform's User-Agent rule for /admin/ requests ([https] user_agent: the ASA's ASDM
    # agent): "any" accepts every agent, "device" refuses requests without it, as the device.
    user_agent_rule: str = "any"
    # What every device's clock reads when the emulator makes it: an ISO 8601 time (UTC without
    # a zone), "transcript" for the transcripts' moment (their outputs byte for byte); None: the
    # host's time (mgmtbench.emulator.device.clock).
    clock_start: str | None = None

    def __post_init__(self) -> None:
        """The processing delay checked: a device that takes more than a minute per command
        is broken, and an infinite delay hangs every session; and the clock's start."""
        check_seconds("processing_delay", self.processing_delay, zero=True, most=MAX_DELAY)
        check_clock_start(self.clock_start)

    @property
    def ssh_server(self) -> SshServerOptions:
        """The SSH server's part of these options."""
        return SshServerOptions(self.algorithms, self.host_key_type, self.auth_methods,
                                self.login_privilege)

    def with_ssh_server(self, ssh: SshServerOptions) -> EmulatorOptions:
        """These options with ``ssh``'s algorithms, host key type, login methods and login
        privilege."""
        return replace(self, algorithms=ssh.algorithms, host_key_type=ssh.host_key_type,
                       auth_methods=ssh.auth_methods, login_privilege=ssh.login_privilege)

    def address(self, index: int) -> str:
        """The address device ``index`` listens on."""
        return self.addresses[index] if self.addresses else self.bind

    def mgmt_ip(self, index: int) -> str:
        """The address device ``index`` reports as its management address: the one it is served
        on (a lab's), or 198.18.0.1 when served on loopback or a wildcard address."""
        try:
            address = ipaddress.ip_address(self.address(index))
        except ValueError:  # a name such as "localhost"
            return "198.18.0.1"
        if address.is_loopback or address.is_unspecified:
            return "198.18.0.1"
        return str(address)

    def port(self, base: int, index: int) -> int:
        """Device ``index``'s port: the same on every address, or ``base + index`` on one."""
        if not base:
            return 0
        return base if self.addresses else base + index

    def hostnames(self) -> list[str]:
        """Distinct hostnames: ``R1`` for one device, ``R1-001`` ... for a fleet (or ``names``)."""
        if self.names:
            return list(self.names)
        if self.devices == 1:
            return [self.hostname]
        width = max(3, len(str(self.devices)))
        return [f"{self.hostname}-{i:0{width}d}" for i in range(1, self.devices + 1)]
