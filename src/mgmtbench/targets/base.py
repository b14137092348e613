"""What a target is: :class:`Target` (where and how a client reaches one device), the
:class:`Login` every target of one source shares, how a client logs in (:class:`Auth`), what it
asks of a device (:class:`Service`) and its SSH algorithm choices (:class:`SshAlgorithms`).

Standard library only: the lab's helper processes import :class:`Service` from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Auth(StrEnum):
    """How a client logs in."""

    PASSWORD = "password"
    KEY = "key"  # the private key file in ``Target.key_file``
    AGENT = "agent"  # a key held by the ssh-agent at ``Target.agent_socket``


class Service(StrEnum):
    """What a client asks of a device: a device runtime may serve only some of these
    (:meth:`~mgmtbench.lab.runtimes.base.DeviceRuntime.unsupported`)."""

    SSH_EXEC = "ssh exec"  # exec requests (and the exec sink, source, scp and sftp)
    SSH_SHELL = "ssh shell"  # a PTY and the device's interactive CLI
    HTTPS = "https"  # the HTTPS management API
    NETCONF = "netconf"  # the netconf SSH subsystem (RFC 6242), on the NETCONF port
    GNMI = "gnmi"  # gNMI (gRPC over TLS), on the gNMI port
    HTTP3 = "http3"  # the HTTPS management API over HTTP/3 (QUIC), on the HTTP/3 port (UDP)


@dataclass(frozen=True)
class SshAlgorithms:
    """The client's SSH algorithm preferences, in order (empty: the library's defaults)."""

    kex: tuple[str, ...] = ()
    ciphers: tuple[str, ...] = ()
    macs: tuple[str, ...] = ()
    host_key: tuple[str, ...] = ()

    def is_default(self) -> bool:
        """True when nothing is chosen: the library negotiates with its own defaults."""
        return not (self.kex or self.ciphers or self.macs or self.host_key)


@dataclass(frozen=True)
class Target:
    """Where and how to reach one device."""

    host: str
    ssh_port: int
    https_port: int
    username: str
    password: str = field(repr=False)  # never in a repr: tracebacks and logs stay clean
    enable_secret: str = field(repr=False)
    platform: str = "cisco_ios"
    ca_file: Path | None = None  # the device's CA, for HTTPS verification
    known_hosts: Path | None = None  # OpenSSH known_hosts with the device's host key
    key_file: Path | None = None  # private key for public-key login
    paging_off: str = "terminal length 0"
    width: str = "terminal width 511"
    enable_mode: bool = True  # False: no enable step (Junos: ">" is all there is)
    prompt_gap: str = ""  # printed before the prompt's line (Junos: an empty line)
    auth: Auth = Auth.PASSWORD  # how SSH clients log in (the OpenSSH binary always uses keys)
    agent_socket: Path | None = None  # SSH_AUTH_SOCK for Auth.AGENT
    algorithms: SshAlgorithms = field(default_factory=SshAlgorithms)
    netconf_port: int = 830  # the NETCONF subsystem's port (IOS-XE's 830; 0: the SSH port)
    gnmi_port: int = 9339  # gNMI's port (IANA's 9339, as devices serve it)
    # The HTTPS API over HTTP/3, UDP (the emulator's: the HTTPS port's number); None: not served.
    http3_port: int | None = None


@dataclass(frozen=True)
class Login:
    """Credentials and trust shared by every target of one source."""

    username: str
    password: str = field(repr=False)
    enable_secret: str = field(repr=False)
    key_file: Path | None = None
    auth: Auth = Auth.PASSWORD
    agent_socket: Path | None = None
    algorithms: SshAlgorithms = field(default_factory=SshAlgorithms)


def make_target(host: str, ssh_port: int, https_port: int, *, platform: str, login: Login,
                ca_file: Path | None = None, known_hosts: Path | None = None,
                netconf_port: int = 830, gnmi_port: int = 9339,
                http3_port: int | None = None) -> Target:
    """A target for one device of ``platform`` (its paging command from the platform folder)."""
    from mgmtbench.emulator.device.transcripts import load_platform

    style = load_platform(platform).style
    return Target(host=host, ssh_port=ssh_port, https_port=https_port, username=login.username,
                  password=login.password, enable_secret=login.enable_secret, platform=platform,
                  ca_file=ca_file, known_hosts=known_hosts, key_file=login.key_file,
                  paging_off=style.paging_off, width=style.width_511,
                  enable_mode=style.has_enable, prompt_gap=style.prompt_gap, auth=login.auth,
                  agent_socket=login.agent_socket, algorithms=login.algorithms,
                netconf_port=netconf_port, gnmi_port=gnmi_port, http3_port=http3_port)

