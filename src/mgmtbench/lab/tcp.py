"""The lab's own TCP: both ends of a link behave as the profile says, and every result records
what they did, never what the host happened to have.

Why: a host's defaults leak into results. On a host whose ``net.ipv4.tcp_congestion_control`` is
bbr, a new namespace copies it, so the emulated device paced a 14 KB answer over 8 ms (30 ms RTT)
to 34 ms (150 ms RTT) and httpx ``batch-post`` took 1.27 RTT instead of 1.07. A new namespace also
copies the host's ``tcp_rmem``/``tcp_wmem``; everything else TCP reads per namespace starts at the
kernel's own default.

How each end gets the profile's settings (:class:`~mgmtbench.lab.profiles.LinkProfile`'s
``device_cc``, ``client_cc``, ``mtu``, ``initcwnd``):

- **Congestion control and initial window, by route.** Every route the lab makes carries them as
  route metrics (``ip route ... congctl cubic initcwnd 10``): on the benchmark side the routes to
  the link and to the devices' subnet, on the device side the link's route and the default route
  (and in each device container, its routes). The kernel gives a connection the congestion
  control of the route it takes, whichever end opened it, whatever the namespace's default and
  whatever ``net.ipv4.tcp_allowed_congestion_control`` allows (that list only limits what an
  unprivileged socket may ask for). So every client adapter gets it, the ``ssh`` binary and
  every other subprocess included, and the host's own settings are not touched. A program that
  sets ``TCP_CONGESTION`` on its socket still wins, as it would on a real host: results record
  what the connection used.
- **MTU**: both link interfaces (and the containers' links) are set to it; the MSS follows.
- **The device side's namespace sysctls** are set to :data:`DEVICE_SYSCTLS` (the kernel's own
  defaults, including buffer sizes the host may have tuned), and its default congestion control
  to the profile's where the allowed list lets a namespace choose it (the routes decide anyway).
- **The host's sysctls** are the benchmark side's and not the lab's to change: they are recorded,
  and those that differ from :data:`DEVICE_SYSCTLS` are listed in the result (a warning).

Recorded (:class:`TcpFacts`, in every result and in ``mgmtbench lab check``): each end's
congestion control and MSS as a live connection across the link reports them (the benchmark side
by ``getsockopt``, the device side by ``sock_diag`` inside the devices' namespace; the connection
goes to the lab's echo server, which shares the devices' namespace and routes, or to a device
container's SSH server), each end's MTU, initial window and sysctls. Asked-for settings that a
live connection does not show (another congestion control, another MTU) fail the lab: what it
would measure is not what it says.
"""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import socket
import struct
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyroute2 import IPRoute
from pyroute2.netlink.diag import DiagSocket

from mgmtbench.errors import LabError, UsageError
from mgmtbench.lab.netns import in_namespace
from mgmtbench.lab.procfs import PROC
from mgmtbench.lab.profiles import LinkProfile

#: What the device side's namespace gets: the kernel's defaults for a new namespace, written out
#: because a new namespace copies the host's buffer sizes (``tcp_rmem``/``tcp_wmem``: Linux's
#: defaults, the maxima it picks on a machine with this much memory).
DEVICE_SYSCTLS: dict[str, str] = {
    "net.ipv4.tcp_slow_start_after_idle": "1",
    "net.ipv4.tcp_autocorking": "1",
    "net.ipv4.tcp_notsent_lowat": "4294967295",
    "net.ipv4.tcp_rmem": "4096 131072 6291456",
    "net.ipv4.tcp_wmem": "4096 16384 4194304",
    "net.ipv4.tcp_no_metrics_save": "0",
    "net.ipv4.tcp_timestamps": "1",
    "net.ipv4.tcp_sack": "1",
    "net.ipv4.tcp_window_scaling": "1",
    "net.ipv4.tcp_ecn": "2",
}
AVAILABLE = PROC / "sys/net/ipv4/tcp_available_congestion_control"
DEFAULT_CC_SYSCTL = "net.ipv4.tcp_congestion_control"
SOL_TCP_INFO = 11  # TCP_INFO
# struct tcp_info: tcpi_snd_mss at byte 16, tcpi_pmtu at 60, tcpi_snd_cwnd at 80.
_SND_MSS = 16
LINK_SCOPE, KERNEL_PROTO = 253, 2  # a prefix route as the kernel makes it: scope link, proto kernel
RTM_F_FIB_MATCH = 0x2000  # 'ip route get fibmatch': the route itself, with its metrics
TCP_ESTABLISHED = 1
ESTABLISHED_WAIT = 15.0  # seconds: several round trips of the slowest link a profile allows


def route_metrics(profile: LinkProfile, side: str) -> dict[str, object]:
    """The metrics every lab route on ``side`` (``device`` or ``client``) carries, as pyroute2
    takes them (``ipr.route("add", ..., metrics=...)``)."""
    cc = profile.device_cc if side == "device" else profile.client_cc
    return {"cc_algo": cc, "initcwnd": profile.initcwnd}


def own_link(ipr: IPRoute, index: int, address: str, prefixlen: int,
             metrics: dict[str, object], mtu: int) -> None:
    """Interface ``index`` (up, holding ``address``/``prefixlen``) at ``mtu``, and the route the
    kernel made for its prefix replaced by one carrying ``metrics`` (:func:`route_metrics`)."""
    ipr.link("set", index=index, mtu=mtu)
    network = ipaddress.IPv4Network(f"{address}/{prefixlen}", strict=False)
    ipr.route("replace", dst=str(network), oif=index, scope=LINK_SCOPE, prefsrc=address,
              proto=KERNEL_PROTO, metrics=metrics)


def available() -> list[str]:
    """The congestion controls this kernel has loaded (or built in)."""
    try:
        return AVAILABLE.read_text().split()
    except OSError:
        return []


def check_available(profile: LinkProfile) -> None:
    """Load the module of a congestion control the profile asks for that the kernel has not
    loaded (``modprobe tcp_NAME``, as the kernel itself would for a route); a one-line
    UsageError if it still lacks it."""
    for name in dict.fromkeys((profile.device_cc, profile.client_cc)):
        have = available()
        if have and name not in have and shutil.which("modprobe"):
            subprocess.run(["modprobe", "-q", f"tcp_{name}"], check=False, timeout=30,
                           capture_output=True)
            have = available()
        if have and name not in have:
            raise UsageError(
                f"profile {profile.name!r} asks for congestion control {name!r}, which this "
                f"kernel does not offer (it has {' '.join(have)}): load it with `modprobe "
                f"tcp_{name}` as root, or choose one of those (cc=..., device_cc=..., "
                "client_cc=...)")


def configure_device_namespace(cc: str) -> None:
    """In the calling thread's (device side) namespace: :data:`DEVICE_SYSCTLS`, and ``cc`` as
    the default congestion control where the allowed list lets this namespace choose it."""
    for name, value in DEVICE_SYSCTLS.items():
        # A kernel that keeps one of them host-wide (older kernels) or lacks it: left as it is,
        # and recorded as the namespace has it.
        with contextlib.suppress(FileNotFoundError, PermissionError):
            _write(name, value)
    # Refused unless in net.ipv4.tcp_allowed_congestion_control: the routes carry it anyway.
    with contextlib.suppress(PermissionError):
        _write(DEFAULT_CC_SYSCTL, cc)


def read_sysctls() -> dict[str, str]:
    """:data:`DEVICE_SYSCTLS`'s names and the default congestion control, as the calling
    thread's namespace has them (whitespace as ``sysctl`` prints it: single spaces)."""
    out = {}
    for name in (*DEVICE_SYSCTLS, DEFAULT_CC_SYSCTL):
        try:
            out[name] = " ".join(_path(name).read_text().split())
        except OSError:
            out[name] = "(missing)"
    return out


@dataclass(frozen=True)
class TcpEnd:
    """One end of the link as a live connection showed it."""

    cc: str  # congestion control of the connection
    mss: int  # the connection's sending MSS
    mtu: int  # the interface's MTU towards the other end
    initcwnd: int | None  # the route's initial window (None: the route does not set it)
    sysctls: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TcpFacts:
    """Both ends of a lab's link: what the profile asked for, what each end showed, and what
    differs (``mismatches``: asked for and not got, which fails the lab; ``differs``: the
    benchmark side's host settings unlike the device side's, which a result carries as a
    warning)."""

    asked: dict[str, object]
    device: TcpEnd
    client: TcpEnd
    mismatches: list[str]
    differs: list[str]

    def as_dict(self) -> dict[str, object]:
        """The JSON form results and ``mgmtbench lab check --json`` carry."""
        return asdict(self)

    def summary(self) -> str:
        """One line: ``device cubic MSS 1448 MTU 1500 | client cubic MSS 1448 MTU 1500``."""
        def end(name: str, e: TcpEnd) -> str:
            return f"{name} {e.cc} MSS {e.mss} MTU {e.mtu} initcwnd {e.initcwnd or 'default'}"
        return f"{end('device', self.device)} | {end('client', self.client)}"


def observe(profile: LinkProfile, address: str, port: int, device_netns: Path) -> TcpFacts:
    """Open a connection to ``address``:``port`` (served in namespace ``device_netns``) from
    this thread's namespace, read both ends' TCP state while it is open, and compare with
    ``profile``."""
    with socket.create_connection((address, port), timeout=10) as sock:
        local_port = sock.getsockname()[1]
        info = sock.getsockopt(socket.IPPROTO_TCP, SOL_TCP_INFO, 104)
        client_cc = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
        mtu, initcwnd = _route_to(address)
        client = TcpEnd(cc=client_cc.split(b"\0", 1)[0].decode(),
                        mss=struct.unpack_from("I", info, _SND_MSS)[0], mtu=mtu,
                        initcwnd=initcwnd, sysctls=read_sysctls())
        client_ip = sock.getsockname()[0]
        device = in_namespace(device_netns, lambda: _device_end(port, local_port, client_ip))
    return compare(profile, device, client)


def compare(profile: LinkProfile, device: TcpEnd, client: TcpEnd) -> TcpFacts:
    """:class:`TcpFacts` for what ``profile`` asked and what the two ends showed."""
    asked: dict[str, object] = {"device_cc": profile.device_cc, "client_cc": profile.client_cc,
                                "mtu": profile.mtu, "initcwnd": profile.initcwnd}
    mismatches = []
    for side, end, cc in (("device", device, profile.device_cc),
                          ("client", client, profile.client_cc)):
        if end.cc != cc:
            mismatches.append(f"{side} side congestion control is {end.cc}, not {cc}")
        if end.mtu != profile.mtu:
            mismatches.append(f"{side} side MTU is {end.mtu}, not {profile.mtu}")
        if end.initcwnd != profile.initcwnd:
            mismatches.append(f"{side} side initial window is {end.initcwnd}, "
                              f"not {profile.initcwnd}")
    differs = [f"{name} is {client.sysctls.get(name)} on the benchmark side (host), "
               f"{value} on the device side" for name, value in device.sysctls.items()
               if name != DEFAULT_CC_SYSCTL and client.sysctls.get(name) != value]
    return TcpFacts(asked, device, client, mismatches, differs)


def require(facts: TcpFacts, lab: str) -> None:
    """Raise :class:`~mgmtbench.errors.LabError` if the lab did not get what it asked for."""
    if facts.mismatches:
        raise LabError(f"lab {lab}: TCP is not as its profile asks: {'; '.join(facts.mismatches)}"
                       " (something on this host overrides the lab's routes or interfaces)")


def _device_end(port: int, peer_port: int, peer_ip: str) -> TcpEnd:
    """The device's end of the connection from ``peer_ip``:``peer_port``, by sock_diag, in this
    thread's namespace, once established there (the client's end is established half a round
    trip before the device's: until the client's ACK arrives, the device holds a request)."""
    deadline = time.monotonic() + ESTABLISHED_WAIT
    with DiagSocket() as diag:
        diag.bind()
        while True:
            # Extensions: INET_DIAG_INFO (1 << 1) and INET_DIAG_CONG (1 << 3).
            found = [msg for msg in diag.get_sock_stats(
                         family=socket.AF_INET, states=1 << TCP_ESTABLISHED, extensions=0x0A,
                         sport=port, dport=peer_port)
                     if msg["idiag_sport"] == port and msg["idiag_dport"] == peer_port
                     and msg["idiag_dst"] == peer_ip]
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.005)
    if not found:
        raise LabError(f"the device's end of a connection from {peer_ip}:{peer_port} to port "
                       f"{port} was not established in its namespace within "
                       f"{ESTABLISHED_WAIT:.0f} s")
    msg = found[0]
    info = msg.get_attr("INET_DIAG_INFO")
    mtu, initcwnd = _route_to(peer_ip)
    return TcpEnd(cc=str(msg.get_attr("INET_DIAG_CONG")), mss=int(info["tcpi_snd_mss"]),
                  mtu=mtu, initcwnd=initcwnd, sysctls=read_sysctls())


def _route_to(address: str) -> tuple[int, int | None]:
    """The MTU of the interface and the initial window (None: not set) of the route this
    thread's namespace takes to ``address`` (over netlink: sysfs shows the namespace that
    mounted it, not the thread's)."""
    with IPRoute() as ipr:
        route = ipr.route("get", dst=address, flags=RTM_F_FIB_MATCH)[0]
        mtu = ipr.get_links(route.get_attr("RTA_OIF"))[0].get_attr("IFLA_MTU")
    metrics = route.get_attr("RTA_METRICS")
    initcwnd = metrics.get_attr("RTAX_INITCWND") if metrics is not None else None
    return int(mtu), int(initcwnd) if initcwnd is not None else None


def _path(name: str) -> Path:
    return (PROC / "sys").joinpath(*name.split("."))


def _write(name: str, value: str) -> None:
    _path(name).write_text(value)
