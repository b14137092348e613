"""What the device saw of an HTTP/3 benchmark: its own counts, read before and after the timed
rounds, so a result shows its resumptions and early data were real.

A client can say it resumed and sent early data; the device counts what it took
(:class:`~mgmtbench.emulator.device.http3.Http3Counts`, served at ``/mgmtbench/http3``). The
transport benchmark reads them over HTTPS (verified with the CA, untimed, outside the wire tap's
capture) before and after its timed rounds and records, per iteration:
``connections_per_iteration``, ``resumed_per_iteration``, ``early_data_per_iteration``
(requests the device answered from 0-RTT data) and ``address_validated_per_iteration``
(connections whose address an earlier NEW_TOKEN token validated at once). A round of ``0rtt``
that the device did not take in early data, or of ``0rtt-resumption`` that it did not resume,
fails the benchmark: the figure would time something else under that name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mgmtbench.emulator.device.http3 import read_http3_counts
from mgmtbench.targets import Target

__all__ = ["DeviceEvidence", "http3_evidence"]

#: What each mode claims, as the device's count that must grow by one per iteration.
_CLAIMS = {"0rtt": ("early_data_accepted", "early data"),
           "0rtt-resumption": ("resumed", "resumptions")}


@dataclass
class DeviceEvidence:
    """The device's HTTP/3 counts around the timed rounds of one benchmark."""

    target: Target
    mode: str
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)

    def _read(self) -> dict[str, int]:
        scheme_host = f"[{self.target.host}]" if ":" in self.target.host else self.target.host
        assert self.target.ca_file is not None  # the HTTP/3 adapters refuse a target without
        return read_http3_counts(f"https://{scheme_host}:{self.target.https_port}",
                                 self.target.ca_file, self.target.username, self.target.password)

    def start(self) -> None:
        """Read the counts before the timed rounds."""
        self.before = self._read()

    def stop(self) -> None:
        """Read them after."""
        self.after = self._read()

    def per_iteration(self, rounds: int) -> dict[str, float]:
        """What the device saw per timed round: connections, resumptions, early requests."""
        grown = {name: self.after[name] - self.before[name] for name in self.before}
        return {"connections_per_iteration": round(grown["connections"] / rounds, 2),
                "resumed_per_iteration": round(grown["resumed"] / rounds, 2),
                "early_data_per_iteration": round(grown["early_data_accepted"] / rounds, 2),
                "address_validated_per_iteration": round(grown["address_validated"] / rounds, 2)}

    def problem(self, rounds: int) -> str | None:
        """Why the mode's claim does not hold (None: it does): every ``0rtt`` round needs a
        request the device took in early data, every ``0rtt-resumption`` round a resumption."""
        claim = _CLAIMS.get(self.mode)
        if claim is None:
            return None
        name, what = claim
        grown = self.after[name] - self.before[name]
        if grown < rounds:
            return (f"{self.mode}: the device counted {grown} {what} in {rounds} timed rounds "
                    "(one per round expected)")
        return None


def http3_evidence(target: Target, mode: str) -> DeviceEvidence:
    """The device's counts to take around an HTTP/3 benchmark of ``mode``."""
    return DeviceEvidence(target, mode)
