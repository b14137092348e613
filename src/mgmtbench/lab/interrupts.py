"""SIGINT and SIGTERM while labs are up in this process: both unwind like Ctrl-C, except during
the steps that must not be cut in half.

While a lab is starting or up (:func:`acquire` .. :func:`release`), SIGTERM raises
``KeyboardInterrupt`` as SIGINT does (pytest obeys it too: it stops the session and runs fixture
teardown), so the lab's ``down`` runs. Inside :func:`held` a signal waits for the block's end
and is raised then: a process started but not yet recorded in the lab's state, a namespace
half made, or a clean-up half done is exactly what an interrupted start used to leave behind.

Signals are Python's to handle in the main thread only: elsewhere (a lab built from a thread,
as a chain of labs does) these functions change nothing. A handler somebody else installed is
left alone.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_users = 0  # labs starting or up in this process
_saved: dict[int, Any] = {}  # handlers to restore when the last lab is down
_depth = 0  # nesting of held()
_pending: int | None = None  # a signal that arrived inside held()


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _handler(signum: int, frame: FrameType | None) -> None:
    global _pending
    if _depth:
        _pending = _pending or signum
        return
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def acquire() -> bool:
    """A lab starts: take over SIGINT and SIGTERM where they have their default handlers.
    Returns whether it counted (main thread only): pass that to :func:`release`."""
    global _users
    if not _main_thread():
        return False
    if _users == 0:
        defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
        for signum in _SIGNALS:
            current = signal.getsignal(signum)
            if current is defaults[signum] or current is None:
                _saved[signum] = current
                signal.signal(signum, _handler)
    _users += 1
    return True


def release(counted: bool) -> None:
    """A lab is down: give the handlers back when it was the last."""
    global _users
    if not counted or not _main_thread():
        return
    _users -= 1
    if _users == 0:
        for signum, handler in _saved.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        _saved.clear()


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM that arrive inside the block are raised (``KeyboardInterrupt``) when
    it ends instead of in the middle of it."""
    global _depth, _pending
    if not _main_thread():
        yield
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _pending is not None:
            signum, _pending = _pending, None
            raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")
