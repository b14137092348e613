"""The link backend interface: how a lab's link between the host and a device namespace is made
and impaired. One module per backend; :mod:`mgmtbench.lab.backends` picks one by name or by what the
kernel offers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from mgmtbench.errors import UsageError
from mgmtbench.lab.profiles import LinkProfile


@dataclass(frozen=True)
class LinkEnds:
    """The two interfaces of a lab link: ``host_if`` in the benchmark's namespace, ``dev_if`` in
    the device namespace ``netns``."""

    lab_id: str
    netns: str
    host_if: str
    dev_if: str


class LinkBackend(ABC):
    """Creates the link's two interfaces and impairs the traffic between them."""

    name: ClassVar[str]
    #: What the backend can impair: the names of :attr:`LinkProfile.impairments` it honours.
    supports: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, ends: LinkEnds, profile: LinkProfile) -> None:
        refusal = self.refusal(profile)
        if refusal is not None:
            raise UsageError(refusal)
        self.ends = ends
        self.profile = profile

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this backend cannot run on this machine (None: it can)."""
        return None

    @classmethod
    def refusal(cls, profile: LinkProfile) -> str | None:
        """Why this backend cannot impair a link as ``profile`` says, in one sentence naming
        what it lacks (None: it can)."""
        lacking = [text for what, text in profile.impairments.items() if what not in cls.supports]
        if not lacking:
            return None
        can = f"only impairs {', '.join(sorted(cls.supports))}" if cls.supports else \
            "impairs nothing"
        return (f"link backend {cls.name!r} {can}, but profile {profile.name!r} asks for "
                f"{', '.join(lacking)} (--link-backend auto picks one that can)")

    @abstractmethod
    def up(self) -> None:
        """Create both interfaces (down, no addresses) and apply the profile."""

    @abstractmethod
    def down(self) -> None:
        """Remove what :meth:`up` created; safe to call twice or after a failed ``up``."""

    def pids(self) -> list[int]:
        """Processes the backend runs (recorded so a later run can clean up after a SIGKILL)."""
        return []

    def stats(self) -> dict[str, Any] | None:
        """The backend's own tally of the link's traffic, if it keeps one (None: it keeps none;
        the kernel's interface counters are :meth:`mgmtbench.lab.Lab.counters`)."""
        return None
