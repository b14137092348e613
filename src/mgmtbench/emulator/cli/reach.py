"""``ping`` and ``traceroute`` answered from the device's own view of the network, for any
platform: what a probe to an address would meet is worked out from the device's routing table
(a platform gives :class:`Probe` a function that names the hops to an address, or None: no way
there), and the output is worded by the platform's :class:`Wording` (data: IOS's is
:data:`IOS`).

- an address of the device itself answers at once (one hop);
- an address inside a connected subnet answers (one hop: itself);
- an address a route covers answers through the route's next hops (the next hop, then the
  address); a route to ``Null0`` or no route at all: every probe is lost;
- round-trip times are small whole milliseconds, one more per hop, the same on every run.

Options are keywords after the address (IOS: ``repeat N``, ``size N``, ``timeout N``, ``source
ADDRESS|INTERFACE``, ``df-bit``; ``traceroute``'s ``ttl MIN MAX``, ``probe N``, ``timeout N``,
``source X``, ``numeric``, ``port N``), any unambiguous prefix of one, and ``vrf V`` before the
address; the words are the platform's (:attr:`Wording.ping_options`,
:attr:`Wording.trace_options`).

IOS's wording is after IOS-XE 17's outputs as ntc-templates' tests and NAPALM's ios driver
parse them (``Sending 5, 100-byte ICMP Echos ...``, ``Success rate is 100 percent (5/5),
round-trip min/avg/max = 1/1/2 ms``, ``Tracing the route to ...``); the error lines are from
memory, not captures. A traceroute that reaches nothing stops after :data:`MAX_LOST_HOPS` lines
of lost probes (a device would go on to its maximum TTL, a second or more each).

Platforms whose ping prints a line per reply (EOS's Linux iputils, NX-OS's and Junos's BSD-like
ping) give :attr:`Wording.reply_line`; their round-trip times have three decimals (the same whole
part as above, a fraction picked by the address). :data:`EOS`, :data:`NXOS` and :data:`JUNOS`
are worded from memory of those outputs and of what NAPALM's eos, nxos_ssh and junos drivers
parse, not from captures. :func:`walk` finds the hops through a table of :class:`Route` s, for
platforms whose routing table is read from their ``show ip route`` / ``show route`` text.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

#: Lines of ``* * *`` a traceroute to an unreachable address prints at most.
MAX_LOST_HOPS = 30
#: Probes a ping sends at most (more is refused as an invalid count).
MAX_REPEAT = 1_000_000


@dataclass(frozen=True)
class Wording:
    """How a platform words ping and traceroute, and the option words it takes (word ->
    option name: ``count``, ``size``, ``timeout``, ``source``, ``df``, ``ttl``, ``probes``,
    ``numeric``, ``port``; the option's number of values)."""

    ping_head: str
    ping_source: str
    ping_df: str
    reply_mark: str
    lost_mark: str
    marks_per_line: int
    ping_success: str
    ping_none: str
    trace_head: str
    trace_hop: str
    trace_rtt: str
    trace_lost: str
    unknown_host: str
    bad_source: str
    unknown_vrf: str
    defaults: Mapping[str, int] = field(default_factory=dict)
    ping_options: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    trace_options: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    #: A line per reply (``{seq}``, ``{target}``, ``{reply}`` / ``{icmp}`` bytes, ``{ttl}``,
    #: ``{fms}``): in place of the marks ("": marks).
    reply_line: str = ""
    #: A line per lost probe where the platform prints one (``{seq}``; "": none).
    timeout_line: str = ""
    #: The first probe's sequence number.
    seq_start: int = 1
    #: What separates the ``*`` of a lost traceroute hop.
    lost_join: str = "  "
    #: The TTL the replies come back with.
    reply_ttl: int = 64


#: IOS / IOS-XE.
IOS = Wording(
    ping_head="Type escape sequence to abort.\n"
              "Sending {count}, {size}-byte ICMP Echos to {target}, timeout is {timeout} "
              "seconds:\n",
    ping_source="Packet sent with a source address of {source} \n",
    ping_df="Packet sent with the DF bit set\n",
    reply_mark="!",
    lost_mark=".",
    marks_per_line=70,
    ping_success="Success rate is {percent} percent ({received}/{count}), round-trip "
                 "min/avg/max = {min}/{avg}/{max} ms\n",
    ping_none="Success rate is 0 percent (0/{count})\n",
    trace_head="Type escape sequence to abort.\nTracing the route to {target}\n"
               "VRF info: (vrf in name/id, vrf out name/id)\n",
    trace_hop="{hop:>3} {address} {probes}\n",
    trace_rtt="{ms} msec",
    trace_lost="{hop:>3}  {probes} \n",
    unknown_host="% Unrecognized host or address, or protocol not running.\n\n",
    bad_source="% Invalid source address- IP address not on any of our up interfaces\n",
    unknown_vrf="% VRF {vrf} does not have a usable source address\n",
    defaults={"count": 5, "size": 100, "timeout": 2, "ttl_min": 1, "ttl_max": 30,
              "probes": 3},
    ping_options={"repeat": ("count", 1), "size": ("size", 1), "timeout": ("timeout", 1),
                  "source": ("source", 1), "df-bit": ("df", 0), "validate": ("validate", 0),
                  "data": ("data", 1)},
    trace_options={"ttl": ("ttl", 2), "timeout": ("timeout", 1), "source": ("source", 1),
                   "probe": ("probes", 1), "numeric": ("numeric", 0), "port": ("port", 1)},
)


#: Ping and traceroute options of Linux's iputils ping / traceroute (EOS's ``bash``).
_LINUX_TRACE = {"-m": ("max_ttl", 1), "-w": ("timeout", 1), "-s": ("source", 1),
                "-q": ("probes", 1), "-n": ("numeric", 0), "-f": ("first_ttl", 1),
                "-p": ("port", 1)}

#: Arista EOS: ``ping`` is Linux's iputils ping (``size`` is the whole IP datagram), its
#: ``traceroute`` Linux's traceroute (also through ``bash``).
EOS = Wording(
    ping_head="PING {target} ({target}) {data}({size}) bytes of data.\n",
    ping_source="",
    ping_df="",
    reply_mark="",
    lost_mark="",
    marks_per_line=0,
    reply_line="{icmp} bytes from {target}: icmp_seq={seq} ttl={ttl} time={fms:.3f} ms\n",
    ping_success="\n--- {target} ping statistics ---\n"
                 "{count} packets transmitted, {received} received, {loss}% packet loss, "
                 "time {elapsed}ms\n"
                 "rtt min/avg/max/mdev = {fmin:.3f}/{favg:.3f}/{fmax:.3f}/{fdev:.3f} ms, "
                 "ipg/ewma {ipg:.3f}/{favg:.3f} ms\n",
    ping_none="\n--- {target} ping statistics ---\n"
              "{count} packets transmitted, 0 received, 100% packet loss, time {elapsed}ms\n\n",
    trace_head="traceroute to {target} ({target}), {max_ttl} hops max, 60 byte packets\n",
    trace_hop="{hop:>2}  {address} ({address}) {probes}\n",
    trace_rtt=" {fms:.3f} ms",
    trace_lost="{hop:>2}  {probes}\n",
    lost_join=" ",
    unknown_host="ping: {target}: Name or service not known\n",
    bad_source="ping: bind: Cannot assign requested address\n",
    unknown_vrf="% VRF {vrf} does not exist\n",
    defaults={"count": 5, "size": 100, "timeout": 2, "ttl_min": 1, "ttl_max": 30,
              "probes": 3},
    ping_options={"repeat": ("count", 1), "size": ("size", 1), "timeout": ("timeout", 1),
                  "source": ("source", 1), "interface": ("source", 1), "df-bit": ("df", 0)},
    trace_options=_LINUX_TRACE,
)

#: Cisco NX-OS: ``ping ADDRESS [count N] [packet-size N] [timeout N] [source X] [vrf V]``.
NXOS = Wording(
    ping_head="PING {target} ({target}): {size} data bytes\n",
    ping_source="",
    ping_df="",
    reply_mark="",
    lost_mark="",
    marks_per_line=0,
    reply_line="{reply} bytes from {target}: icmp_seq={seq} ttl={ttl} time={fms:.3f} ms\n",
    timeout_line="Request {seq} timed out\n",
    seq_start=0,
    reply_ttl=254,
    ping_success="\n--- {target} ping statistics ---\n"
                 "{count} packets transmitted, {received} packets received, {loss:.2f}% "
                 "packet loss\nround-trip min/avg/max = {fmin:.3f}/{favg:.3f}/{fmax:.3f} ms\n",
    ping_none="\n--- {target} ping statistics ---\n"
              "{count} packets transmitted, 0 packets received, 100.00% packet loss\n",
    trace_head="traceroute to {target} ({target}), {max_ttl} hops max, 40 byte packets\n",
    trace_hop="{hop:>2} {address} ({address}) {probes}\n",
    trace_rtt=" {fms:.3f} ms",
    trace_lost="{hop:>2} {probes}\n",
    lost_join=" ",
    unknown_host="% Invalid host/interface {target}\n",
    bad_source="% Invalid source address\n",
    unknown_vrf="% VRF {vrf} does not exist\n",
    defaults={"count": 5, "size": 56, "timeout": 2, "ttl_min": 1, "ttl_max": 30,
              "probes": 3},
    ping_options={"count": ("count", 1), "packet-size": ("size", 1), "timeout": ("timeout", 1),
                  "source": ("source", 1), "source-interface": ("source", 1),
                  "vrf": ("vrf", 1), "df-bit": ("df", 0), "interval": ("interval", 1)},
    trace_options={"source": ("source", 1), "source-interface": ("source", 1),
                   "vrf": ("vrf", 1), "port": ("port", 1)},
)

#: Juniper Junos: ``ping ADDRESS [count N] [size N] [wait N] [ttl N] [source X]
#: [routing-instance V] [rapid]`` (a ``count`` is needed on a device; here 5 by default),
#: ``traceroute ADDRESS [ttl N] [wait N] [source X] [routing-instance V]``.
JUNOS = Wording(
    ping_head="PING {target} ({target}): {size} data bytes\n",
    ping_source="",
    ping_df="",
    reply_mark="",
    lost_mark="",
    marks_per_line=0,
    reply_line="{reply} bytes from {target}: icmp_seq={seq} ttl={ttl} time={fms:.3f} ms\n",
    seq_start=0,
    ping_success="\n--- {target} ping statistics ---\n"
                 "{count} packets transmitted, {received} packets received, {loss}% packet "
                 "loss\nround-trip min/avg/max/stddev = {fmin:.3f}/{favg:.3f}/{fmax:.3f}/"
                 "{fdev:.3f} ms\n",
    ping_none="\n--- {target} ping statistics ---\n"
              "{count} packets transmitted, 0 packets received, 100% packet loss\n",
    trace_head="traceroute to {target} ({target}), {max_ttl} hops max, 52 byte packets\n",
    trace_hop="{hop:>2}  {address} ({address}) {probes}\n",
    trace_rtt=" {fms:.3f} ms",
    trace_lost="{hop:>2}  {probes}\n",
    lost_join=" ",
    unknown_host="ping: cannot resolve {target}: Host name lookup failure\n",
    bad_source="ping: bind: Can't assign requested address\n",
    unknown_vrf="error: Routing instance {vrf} does not exist\n",
    defaults={"count": 5, "size": 56, "timeout": 1, "ttl_min": 1, "ttl_max": 30,
              "probes": 3},
    ping_options={"count": ("count", 1), "size": ("size", 1), "wait": ("timeout", 1),
                  "ttl": ("ttl", 1), "source": ("source", 1), "interface": ("source", 1),
                  "routing-instance": ("vrf", 1), "rapid": ("rapid", 0),
                  "do-not-fragment": ("df", 0), "no-resolve": ("numeric", 0),
                  "interval": ("interval", 1)},
    trace_options={"ttl": ("max_ttl", 1), "wait": ("timeout", 1), "source": ("source", 1),
                   "routing-instance": ("vrf", 1), "no-resolve": ("numeric", 0),
                   "interface": ("source", 1)},
)


class BadWord(ValueError):
    """The option word at ``index`` (of the words after the command) is not one the platform
    takes, or its value is wrong."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


@dataclass(frozen=True)
class Request:
    """What was asked: the address (as typed), the VRF (None: global) and the options."""

    target: str
    vrf: str | None
    options: dict[str, list[str]]

    def number(self, name: str, default: int, index: int = 0) -> int:
        """Option ``name``'s value ``index`` as a number (``default`` if not given)."""
        values = self.options.get(name)
        return int(values[index]) if values and len(values) > index else default


def parse(words: list[str], options: Mapping[str, tuple[str, int]]) -> Request:
    """``[vrf V] [ip] TARGET option...`` -> the request (:class:`BadWord` names the bad word)."""
    index = 0
    vrf = None
    if len(words) >= 2 and words[0].lower() == "vrf":
        vrf, index = words[1], 2
    if index < len(words) and words[index].lower() == "ip" and index + 1 < len(words):
        index += 1
    if index >= len(words):
        raise BadWord(len(words))
    target = words[index]
    index += 1
    chosen: dict[str, list[str]] = {}
    while index < len(words):
        word = words[index].lower()
        matches = [k for k in options if k.startswith(word)]
        if word in options:
            matches = [word]
        if len(matches) != 1:
            raise BadWord(index)
        name, count = options[matches[0]]
        values = words[index + 1:index + 1 + count]
        if len(values) < count:
            raise BadWord(min(index + 1, len(words)))
        for offset, value in enumerate(values):
            if name not in ("source", "data", "vrf") and not value.isdigit():
                raise BadWord(index + 1 + offset)
        chosen[name] = values
        index += 1 + count
    if "vrf" in chosen:
        vrf = chosen.pop("vrf")[0]
    return Request(target, vrf, chosen)


#: The hops to an address in a VRF (the address last), or None: no way there. A platform's
#: function, from its routing table.
Hops = Callable[[str | None, str], "list[str] | None"]
#: Whether a source (an address or an interface) is one of the device's, up, in the VRF.
Source = Callable[[str | None, str], "str | None"]


@dataclass(frozen=True)
class Probe:
    """A device's ping and traceroute: its platform's wording, how to find the hops to an
    address, which VRFs exist and which sources are its own."""

    wording: Wording
    hops: Hops
    vrf_exists: Callable[[str], bool]
    source: Source

    def ping(self, request: Request) -> tuple[str, bool]:
        """The output of a ping, and whether it is a refusal (an error line)."""
        w = self.wording
        checked = self._check(request)
        if checked is not None:
            return checked, False
        count = request.number("count", w.defaults.get("count", 5))
        count = max(1, min(count, MAX_REPEAT))
        size = request.number("size", w.defaults.get("size", 100))
        timeout = request.number("timeout", w.defaults.get("timeout", 2))
        text = w.ping_head.format(count=count, size=size, target=request.target,
                                  timeout=timeout, data=max(size - 28, 0))
        source = request.options.get("source")
        if source:
            text += w.ping_source.format(source=self.source(request.vrf, source[0]))
        if "df" in request.options:
            text += w.ping_df
        hops = self.hops(request.vrf, request.target)
        if w.reply_line:
            return text + self._lines(request, hops, count, size), True
        mark = w.lost_mark if hops is None else w.reply_mark
        marks = mark * count
        text += "".join(marks[i:i + w.marks_per_line] + "\n"
                        for i in range(0, len(marks), w.marks_per_line))
        if hops is None:
            return text + w.ping_none.format(count=count), True
        times = [rtt(request.target, len(hops), i) for i in range(count)]
        return text + w.ping_success.format(
            percent=100, received=count, count=count, min=min(times),
            avg=sum(times) // len(times), max=max(times)), True

    def _lines(self, request: Request, hops: list[str] | None, count: int, size: int) -> str:
        """A ping's reply (or timeout) lines and its statistics, for a platform that prints a
        line per reply."""
        w = self.wording
        target = request.target
        interval = request.number("interval", 1000 if "rapid" not in request.options else 10)
        elapsed = (count - 1) * max(interval, 1) if count > 1 else 0
        stats = {"target": target, "count": count, "elapsed": elapsed}
        if hops is None:
            text = "".join(w.timeout_line.format(seq=w.seq_start + i) for i in range(count))
            return text + w.ping_none.format(**stats)
        times = [fine_rtt(target, len(hops), i) for i in range(count)]
        text = "".join(w.reply_line.format(
            seq=w.seq_start + i, target=target, reply=size + 8, icmp=max(size - 20, 8),
            ttl=w.reply_ttl - len(hops) + 1, fms=ms) for i, ms in enumerate(times))
        mean = sum(times) / len(times)
        deviation = (sum((t - mean) ** 2 for t in times) / len(times)) ** 0.5
        return text + w.ping_success.format(
            **stats, received=count, loss=0, percent=100, fmin=min(times), favg=mean,
            fmax=max(times), fdev=deviation, ipg=mean + 0.05)

    def traceroute(self, request: Request) -> tuple[str, bool]:
        """The output of a traceroute, and whether it is a refusal."""
        w = self.wording
        checked = self._check(request)
        if checked is not None:
            return checked, False
        first = request.number("ttl", w.defaults.get("ttl_min", 1), 0)
        last = request.number("ttl", w.defaults.get("ttl_max", 30), 1)
        if "max_ttl" in request.options:
            first = request.number("first_ttl", w.defaults.get("ttl_min", 1))
            last = request.number("max_ttl", last)
        probes = max(1, request.number("probes", w.defaults.get("probes", 3)))
        text = w.trace_head.format(target=request.target, max_ttl=last)
        hops = self.hops(request.vrf, request.target)
        if hops is None:
            lost = w.lost_join.join("*" for _ in range(probes))
            for hop in range(max(first, 1), min(last, max(first, 1) + MAX_LOST_HOPS - 1) + 1):
                text += w.trace_lost.format(hop=hop, probes=lost)
            return text, True
        for hop, address in enumerate(hops, start=1):
            if hop < first or hop > max(last, 1):
                continue
            times = " ".join(w.trace_rtt.format(ms=rtt(address, hop, i),
                                                fms=fine_rtt(address, hop, i))
                             for i in range(probes))
            text += w.trace_hop.format(hop=hop, address=address, probes=times)
        return text, True

    def _check(self, request: Request) -> str | None:
        """The refusal of a request the device cannot send, if any."""
        w = self.wording
        try:
            ipaddress.IPv4Address(request.target)
        except ValueError:
            return w.unknown_host.format(target=request.target)
        if request.vrf is not None and not self.vrf_exists(request.vrf):
            return w.unknown_vrf.format(vrf=request.vrf)
        source = request.options.get("source")
        if source and self.source(request.vrf, source[0]) is None:
            return w.bad_source
        return None


def rtt(address: str, hops: int, probe: int) -> int:
    """A probe's round-trip time in whole ms: the hop count, and 0 or 1 more (by the address
    and the probe's number: the same on every run)."""
    digest = hashlib.sha256(f"rtt:{address}".encode()).digest()
    return hops + (digest[probe % len(digest)] >> (probe // len(digest) % 8) & 1)


def fine_rtt(address: str, hops: int, probe: int) -> float:
    """:func:`rtt` with three decimals: a little under the whole ms, by the address and the
    probe (the same on every run)."""
    digest = hashlib.sha256(f"fine:{address}:{probe}".encode()).digest()
    return round(max(rtt(address, hops, probe) - 0.9 + digest[0] / 400, 0.05), 3)


@dataclass(frozen=True)
class Route:
    """A route of a table read from a platform's routing table text: its prefix and next hops
    (``None``: attached, the address itself answers); ``discard``: to a null interface."""

    prefix: ipaddress.IPv4Network
    vias: tuple[str | None, ...]
    discard: bool = False


def walk(own: Callable[[str], bool], routes: Callable[[], list[Route]], target: str,
         depth: int = 0) -> list[str] | None:
    """The hops to ``target`` (the address last) through ``routes`` (longest prefix first
    matched; a next hop is walked to in turn, and must be reached through another route),
    None: no way there. ``own``: whether an address
    is the device's."""
    if depth > 8:
        return None
    if own(target):
        return [target]
    address = ipaddress.IPv4Address(target)
    best: Route | None = None
    for route in routes():
        if address in route.prefix and (best is None or
                                        route.prefix.prefixlen > best.prefix.prefixlen):
            best = route
    if best is None or best.discard or not best.vias:
        return None
    via = best.vias[0]
    if via is None:
        return [target]
    if via == target:  # a next hop only a route through itself reaches: unresolved
        return None
    before = walk(own, routes, via, depth + 1)
    return None if before is None else [*before, target]
