"""The labs a test used, checked before and after it: a benchmark on a dead link fails, saying so.

A lab that is up has processes it cannot work without (the ``tun`` delay line, the echo server,
the emulator or sshd processes, device containers, a wire tap while it captures). When one dies
the lab does not stop by itself: clients time out or are refused, or worse, a kept connection
or a counter goes on and a benchmark records numbers of a link that is not there. Each lab can
:meth:`check` itself (``LabError`` naming the dead process and how it ended); this module keeps
the labs used since the current test began (a lab that comes up, or that a fixture hands out),
and mgmtbench's pytest plugin calls :func:`check_used` before and after each test's call.

No thread and no polling while the benchmark runs: the checks cost a ``waitpid`` (``WNOHANG``)
or a ``/proc`` read per process, twice per test, and a death between them fails that test.
"""

from __future__ import annotations

import weakref
from typing import Protocol


class Checked(Protocol):
    """A lab that can check its processes."""

    def check(self) -> None:
        """Raise if a process the lab depends on has died."""


_used: weakref.WeakSet[Checked] = weakref.WeakSet()


def use(lab: Checked) -> None:
    """``lab`` is used by the current test."""
    _used.add(lab)


def begin() -> None:
    """A test begins: no lab used yet."""
    _used.clear()


def check_used() -> None:
    """Check every lab used since :func:`begin` (raises the first lab's ``LabError``)."""
    for lab in list(_used):
        lab.check()
