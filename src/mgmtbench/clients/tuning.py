"""Libraries as shipped and as tuned: the settings a user can change in their own code.

A :class:`Knob` is one such change, found by reading the library: its name (``tcp-nodelay``), the
lines a user writes (``change``), and why it moves time or CPU (``why``). An adapter reads the knobs
it is given with :meth:`~mgmtbench.clients.base._Common.tuned_with`; the library's as-shipped
client has none.

A library's tuned client is a client of its own in the matrix, named ``<library>+tuned``, with every
knob that was measured to matter (:func:`tuned`); each knob alone is ``<library>+<knob>``
(:func:`with_knobs`), which the transport benchmark with ``--clients tuned`` (``nox -s knobs``)
measures one by one against the library as shipped. Knobs that were measured and do not matter
are declared too (``matters=False``, with the figure that says so in ``why``): the report lists
them, and the tuned client leaves them out.

Declared in the library's package (``mgmtbench/clients/<library>/knobs.py``, importing nothing of
the library), so the report can print the change without the library installed.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, TypeVar

from mgmtbench.errors import UsageError

__all__ = ["TUNED", "Knob", "shipped_name", "tuned", "with_knobs"]

#: The suffix of a library's tuned client's name.
TUNED = "+tuned"

#: An adapter class (:class:`~mgmtbench.clients.base.Client` or ``AsyncClient``: not imported,
#: since the base imports this module).
C = TypeVar("C", bound=type[Any])


@dataclass(frozen=True)
class Knob:
    """One setting a user of a library can change in their code."""

    #: Short, kebab-case (``tcp-nodelay``): in client names (``paramiko+tcp-nodelay``) and results.
    name: str
    #: The change, as the few lines a user writes (Python, as in the library's own docs).
    change: str
    #: Why it moves time or CPU, or (``matters=False``) the measurement that says it does not.
    why: str
    #: Whether it was measured to matter: only those are in the library's ``+tuned`` client.
    matters: bool = True
    #: False if the library gives wrong outputs with it (measured against the transcripts): a
    #: change not to make, listed in the report, left out of ``--clients tuned`` (a run of it
    #: would only fail), still a client by name (``<library>+<knob>``) to see it fail.
    correct: bool = True


def shipped_name(name: str) -> str:
    """The as-shipped client a client name tunes (``paramiko+tuned`` -> ``paramiko``); the name
    itself for an as-shipped client."""
    return name.partition("+")[0]


def tuned(base: C, knobs: tuple[Knob, ...]) -> C:
    """``base`` with every knob of ``knobs`` that matters, named ``<base>+tuned``."""
    chosen = tuple(knob for knob in knobs if knob.matters and knob.correct)
    if not chosen:
        raise ValueError(f"{base.name}: no knob that matters, so no tuned client")
    return _variant(base, base.name + TUNED, chosen, knobs)


def with_knobs(base: C, names: list[str]) -> C:
    """``base`` (an as-shipped client declaring ``all_knobs``) with only the knobs ``names``, named
    ``<base>+<name>+...`` (:class:`UsageError` for a knob it does not have)."""
    known = {knob.name: knob for knob in base.all_knobs}
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise UsageError(f"client {base.name} has no knob {', '.join(unknown) or '(none given)'}: "
                         f"choose from {', '.join(known) or 'none'}")
    return _variant(base, "+".join([base.name, *names]), tuple(known[n] for n in names),
                    base.all_knobs)


def _variant(base: C, name: str, knobs: tuple[Knob, ...], all_knobs: tuple[Knob, ...]) -> C:
    """A subclass of ``base`` named ``name`` (the client's name) running with ``knobs``."""
    made: C = types.new_class(  # type: ignore[assignment]
        base.__name__ + "Tuned", (base,), {},
        lambda ns: ns.update({
            "name": name, "knobs": knobs, "all_knobs": all_knobs, "shipped": base.name,
            "__module__": base.__module__,
            "__doc__": f"{base.name} with {', '.join(knob.name for knob in knobs)}."}))
    return made
