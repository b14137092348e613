"""Link profiles: the impairment between the benchmark side and the devices.

A profile names a round-trip time (applied as half of it on each direction), jitter with its
distribution, loss, rate, and (where the backend allows) reordering and duplication. The brief's
profiles are built in, with RTTs from published backbone measurements; users add their own in a
TOML file or as a CLI spec (``rtt=80,jitter=2,loss=0.1,rate=50``).
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from mgmtbench.errors import UsageError

JITTER_DISTRIBUTIONS = ("uniform", "normal", "pareto", "paretonormal")


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

_SPEC_KEYS = {
    "rtt": "rtt_ms", "jitter": "jitter_ms", "dist": "jitter_distribution", "loss": "loss_pct",
    "rate": "rate_mbit", "reorder": "reorder_pct", "duplicate": "duplicate_pct",
}


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
        unknown = set(table) - known
        if unknown:
            raise UsageError(f"{path}: profile {name!r} has unknown keys {sorted(unknown)}; "
                             f"use {sorted(known)}")
        if "rtt_ms" not in table:
            raise UsageError(f"{path}: profile {name!r} needs rtt_ms")
        try:
            out[name] = LinkProfile(name=name, source=str(path), **table).validate()
        except TypeError as exc:
            raise UsageError(f"{path}: profile {name!r}: {exc}") from exc
    return out


def parse_spec(spec: str, name: str = "custom") -> LinkProfile:
    """``rtt=80,jitter=2,dist=normal,loss=0.1,rate=50`` -> a profile."""
    values: dict[str, object] = {}
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in _SPEC_KEYS:
            raise UsageError(f"bad profile spec item {item!r}: use {', '.join(_SPEC_KEYS)} as "
                             "key=value, e.g. rtt=80,jitter=2,loss=0.1")
        target = _SPEC_KEYS[key]
        try:
            values[target] = value.strip() if target == "jitter_distribution" else float(value)
        except ValueError:
            raise UsageError(f"bad number in profile spec item {item!r}") from None
    if "rtt_ms" not in values:
        raise UsageError(f"profile spec {spec!r} needs rtt=<ms>")
    return LinkProfile(name=name, source="spec", **values).validate()  # type: ignore[arg-type]


def resolve(name_or_spec: str, extra: dict[str, LinkProfile] | None = None) -> LinkProfile:
    """A built-in or user profile by name, or an inline spec containing ``=``."""
    if "=" in name_or_spec:
        return parse_spec(name_or_spec)
    table = {**BUILTIN, **(extra or {})}
    if name_or_spec not in table:
        raise UsageError(f"unknown profile {name_or_spec!r}: choose one of {', '.join(table)}, "
                         "or give a spec like rtt=80,jitter=2")
    return table[name_or_spec]


def with_name(profile: LinkProfile, name: str) -> LinkProfile:
    """``profile`` under another name."""
    return replace(profile, name=name)
