"""One place that records what every benchmark result says about where it ran.

:func:`record` puts into a benchmark's ``extra_info`` the experiment's name, the lab's facts
(link backend, device runtime and image, configured and measured RTT, ``rtt_error_ms``: their
difference, the instrument's own error, and ``tcp``: both ends' congestion control, MSS, MTU and
initial window, and the host settings that differ from the device side's), the versions of the
client libraries, and the benchmark's own figures. The report groups rows by ``experiment`` and finds a
section per experiment (:mod:`mgmtbench.results`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

#: The lab facts every lab benchmark records, in this order (optional ones when the lab has them).
LAB_KEYS = ("backend", "runtime", "configured_rtt_ms", "measured_rtt_ms")
OPTIONAL_LAB_KEYS = ("image", "emulator_processes", "tcp")


class HasExtraInfo(Protocol):
    """pytest-benchmark's fixture, as far as recording needs it."""

    extra_info: dict[str, Any]


class HasVersions(Protocol):
    """An adapter or fleet runner class."""

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Distribution name -> version of each library it drives."""


class HasFacts(Protocol):
    """A lab."""

    def facts(self) -> Any:
        """The lab's facts (an object with ``as_dict()``)."""


def lab_facts(lab: HasFacts) -> dict[str, Any]:
    """What a result records about the lab it ran on."""
    facts: Mapping[str, Any] = lab.facts().as_dict()
    out = {key: facts.get(key) for key in LAB_KEYS}
    out.update({key: facts[key] for key in OPTIONAL_LAB_KEYS if facts.get(key) is not None})
    # The instrument's own error: what the lab measured beyond the profile's RTT.
    measured, configured = facts.get("measured_rtt_ms"), facts.get("configured_rtt_ms")
    out["rtt_error_ms"] = (round(measured - configured, 3)
                           if measured is not None and configured is not None else None)
    return out


def record(benchmark: HasExtraInfo, experiment: str, *, lab: HasFacts | None = None,
           library: type[HasVersions] | None = None, **figures: Any) -> None:
    """Record ``experiment``, the lab's facts, the versions of the libraries ``library`` (an
    adapter or fleet runner class) drives, and ``figures``."""
    info: dict[str, Any] = {"experiment": experiment}
    if lab is not None:
        info.update(lab_facts(lab))
    info.update(figures)
    if library is not None:
        info["versions"] = library.versions()
        knobs = getattr(library, "knobs", ())
        if knobs:  # a library as tuned: which knobs, and the client it tunes
            info["knobs"] = [knob.name for knob in knobs]
            info["shipped"] = library.shipped  # type: ignore[attr-defined]
    benchmark.extra_info.update(info)
