"""Link profiles: the impairment between the benchmark side and the devices.

A profile names a round-trip time (applied as half of it on each direction), jitter with its
distribution, loss, rate, and (where the backend allows) reordering and duplication. The brief's
profiles are built in, with RTTs from published backbone measurements (:data:`BUILTIN`), and so
is the regional link with loss or jitter (:data:`IMPAIRED`); users add their own in a
TOML file or as a CLI spec (``rtt=80,jitter=2,loss=0.1,rate=50``), or a built-in one with
overrides (``regional+device_cc=bbr``).

A profile also says how TCP behaves on both ends of the link (:mod:`mgmtbench.lab.tcp` applies
and records it): the congestion control of the devices' side and of the benchmark's side, the
link's MTU, and the initial congestion window. Defaults: cubic on both ends (Linux's own default
and what the published study's machine ran), MTU 1500 (an Ethernet WAN path), the kernel's initial
window of 10 segments; never the host's, whatever its ``net.ipv4.tcp_congestion_control`` says.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from mgmtbench.errors import UsageError

JITTER_DISTRIBUTIONS = ("uniform", "normal", "pareto", "paretonormal")
DEFAULT_CC = "cubic"
DEFAULT_MTU = 1500
DEFAULT_INITCWND = 10  # the kernel's own (RFC 6928); set on the lab's routes all the same
MTU_RANGE = (576, 65535)  # IPv4's minimum datagram every host takes .. a veth's maximum
_CC_NAME = re.compile(r"[a-z][a-z0-9_]{0,15}")  # TCP_CA_NAME_MAX is 16 with its NUL


@dataclass(frozen=True)
class LinkProfile:
    """One impairment setting. Times in milliseconds, rate in Mbit/s (0: unlimited)."""

    name: str
    rtt_ms: float
    jitter_ms: float = 0.0
    jitter_distribution: str = "normal"
    loss_pct: float = 0.0
    rate_mbit: float = 0.0
    reorder_pct: float = 0.0
    duplicate_pct: float = 0.0
    # TCP on both ends of the link (mgmtbench.lab.tcp): congestion control per side, the link's
    # MTU (both interfaces; MSS follows), the initial congestion window (segments).
    device_cc: str = DEFAULT_CC
    client_cc: str = DEFAULT_CC
    mtu: int = DEFAULT_MTU
    initcwnd: int = DEFAULT_INITCWND
    source: str = "built-in"

    @property
    def one_way_ms(self) -> float:
        """Half the RTT: each direction's delay."""
        return self.rtt_ms / 2

    @property
    def impaired(self) -> bool:
        """Whether the profile impairs the link at all."""
        return any((self.rtt_ms, self.jitter_ms, self.loss_pct, self.rate_mbit,
                    self.reorder_pct, self.duplicate_pct))

    @property
    def impairments(self) -> dict[str, str]:
        """What the profile impairs, by the names link backends' ``supports`` use (``delay``,
        ``jitter``, ``loss``, ``rate``, ``reorder``, ``duplicate``), each with its setting."""
        settings = {
            "delay": (self.rtt_ms, f"{self.rtt_ms:g} ms RTT"),
            "jitter": (self.jitter_ms, f"{self.jitter_ms:g} ms jitter"),
            "loss": (self.loss_pct, f"{self.loss_pct:g} % loss"),
            "rate": (self.rate_mbit, f"{self.rate_mbit:g} Mbit/s"),
            "reorder": (self.reorder_pct, f"{self.reorder_pct:g} % reordering"),
            "duplicate": (self.duplicate_pct, f"{self.duplicate_pct:g} % duplication"),
        }
        return {name: text for name, (value, text) in settings.items() if value}

    def as_dict(self) -> dict[str, object]:
        """The profile's fields."""
        return asdict(self)

    def validate(self) -> LinkProfile:
        """The profile itself, or a UsageError listing what is out of range."""
        problems = []
        if not 0 <= self.rtt_ms <= 10_000:
            problems.append("rtt must be 0..10000 ms")
        if not 0 <= self.jitter_ms <= max(self.one_way_ms, 0):
            problems.append("jitter must be between 0 and half the RTT")
        for field_name in ("loss_pct", "reorder_pct", "duplicate_pct"):
            if not 0 <= getattr(self, field_name) <= 100:
                problems.append(f"{field_name.removesuffix('_pct')} must be 0..100 %")
        if self.rate_mbit < 0:
            problems.append("rate cannot be negative")
        if self.jitter_distribution not in JITTER_DISTRIBUTIONS:
            problems.append(f"jitter distribution must be one of {', '.join(JITTER_DISTRIBUTIONS)}")
        for field_name in ("device_cc", "client_cc"):
            if not _CC_NAME.fullmatch(str(getattr(self, field_name))):
                problems.append(f"{field_name} must be a congestion control's name (cubic, bbr, "
                                "reno, ...)")
        if not MTU_RANGE[0] <= self.mtu <= MTU_RANGE[1]:
            problems.append(f"mtu must be {MTU_RANGE[0]}..{MTU_RANGE[1]} bytes")
        if not 1 <= self.initcwnd <= 1024:
            problems.append("initcwnd must be 1..1024 segments")
        if problems:
            raise UsageError(f"profile {self.name!r}: " + "; ".join(problems))
        return self


# RTTs: local; campus LAN; US backbone (regional); LEO satellite; NYC-London; US-Hong Kong;
# North America-Taiwan; geostationary satellite.
BUILTIN: dict[str, LinkProfile] = {
    p.name: p
    for p in (
        LinkProfile("local", 0),
        LinkProfile("campus", 2),
        LinkProfile("regional", 30),
        LinkProfile("leo", 45),
        LinkProfile("continental", 70),
        LinkProfile("intercontinental", 150),
        LinkProfile("transpacific", 175),
        LinkProfile("geo", 600),
    )
}

# The regional link with loss or jitter: our own names (the study's profiles impair delay only,
# and ``all`` stays its RTT ladder, BUILTIN). Loss per packet and direction, as the backends
# apply it; 0.5 % and 2 % bracket what a congested or wireless access path loses. Jitter is
# normal with a 3 ms deviation each way: packets may overtake one another (as under netem), which
# TCP takes for loss when a segment is passed by three others.
IMPAIRED: dict[str, LinkProfile] = {
    p.name: p
    for p in (
        LinkProfile("regional-loss0.5", 30, loss_pct=0.5),
        LinkProfile("regional-loss2", 30, loss_pct=2),
        LinkProfile("regional-jitter", 30, jitter_ms=3),
    )
}

_SPEC_KEYS = {
    "rtt": "rtt_ms", "jitter": "jitter_ms", "dist": "jitter_distribution", "loss": "loss_pct",
    "rate": "rate_mbit", "reorder": "reorder_pct", "duplicate": "duplicate_pct",
    "device_cc": "device_cc", "client_cc": "client_cc", "mtu": "mtu", "initcwnd": "initcwnd",
}
_TEXT_FIELDS = ("jitter_distribution", "device_cc", "client_cc")
_INT_FIELDS = ("mtu", "initcwnd")
#: ``cc=NAME`` sets both ends' congestion control.
_BOTH_ENDS = {"cc": ("device_cc", "client_cc")}


def load_profiles(path: Path) -> dict[str, LinkProfile]:
    """Profiles from a TOML file: one table per profile (``[profiles.satcom] rtt_ms = 550``)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read profiles file {path}: {exc}") from exc
    tables = raw.get("profiles", raw)
    known = {f.name for f in fields(LinkProfile)} - {"name", "source"}
    out: dict[str, LinkProfile] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise UsageError(f"{path}: profile {name!r} must be a table")
        for key, targets in _BOTH_ENDS.items():  # cc = "bbr": both ends
            if key in table:
                table = {**dict.fromkeys(targets, table[key]), **table}
                del table[key]
        unknown = set(table) - known
        if unknown:
            raise UsageError(f"{path}: profile {name!r} has unknown keys {sorted(unknown)}; "
                             f"use {sorted(known | set(_BOTH_ENDS))}")
        if "rtt_ms" not in table:
            raise UsageError(f"{path}: profile {name!r} needs rtt_ms")
        try:
            out[name] = LinkProfile(name=name, source=str(path), **table).validate()
        except TypeError as exc:
            raise UsageError(f"{path}: profile {name!r}: {exc}") from exc
    return out


def _spec_values(spec: str) -> dict[str, object]:
    """``rtt=80,cc=bbr,...`` -> field name -> value (a UsageError for a bad item)."""
    values: dict[str, object] = {}
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        targets = _BOTH_ENDS.get(key) or ((_SPEC_KEYS[key],) if key in _SPEC_KEYS else ())
        if not sep or not targets:
            raise UsageError(f"bad profile spec item {item!r}: use {', '.join([*_SPEC_KEYS, *_BOTH_ENDS])} "
                             "as key=value, e.g. rtt=80,jitter=2,loss=0.1,cc=bbr")
        for target in targets:
            try:
                values[target] = (value.strip() if target in _TEXT_FIELDS
                                  else int(value) if target in _INT_FIELDS else float(value))
            except ValueError:
                kind = "whole number" if target in _INT_FIELDS else "number"
                raise UsageError(f"bad {kind} in profile spec item {item!r}") from None
    return values


def parse_spec(spec: str, name: str = "custom") -> LinkProfile:
    """``rtt=80,jitter=2,dist=normal,loss=0.1,rate=50,cc=bbr,mtu=1400`` -> a profile."""
    values = _spec_values(spec)
    if "rtt_ms" not in values:
        raise UsageError(f"profile spec {spec!r} needs rtt=<ms>")
    return LinkProfile(name=name, source="spec", **values).validate()  # type: ignore[arg-type]


def resolve(name_or_spec: str, extra: dict[str, LinkProfile] | None = None) -> LinkProfile:
    """A built-in or user profile by name, an inline spec containing ``=``, or a name with
    overrides after ``+`` (``regional+device_cc=bbr+mtu=1400``: regional's link, bbr on the
    devices' side, under that whole string as its name so results never mix it with plain
    ``regional``; ``+`` keeps it one item of a comma-separated ``--profiles`` list)."""
    name, plus, overrides = name_or_spec.partition("+")
    if "=" in name:
        return parse_spec(name_or_spec)
    table = {**BUILTIN, **IMPAIRED, **(extra or {})}
    if name not in table:
        raise UsageError(f"unknown profile {name!r}: choose one of {', '.join(table)}, "
                         "or give a spec like rtt=80,jitter=2 (or regional+cc=bbr)")
    if not plus:
        return table[name]
    base = table[name]
    return replace(base, name=name_or_spec, source=f"{base.source} + {overrides}",
                   **_spec_values(overrides.replace("+", ","))).validate()  # type: ignore[arg-type]


def with_name(profile: LinkProfile, name: str) -> LinkProfile:
    """``profile`` under another name."""
    return replace(profile, name=name)
