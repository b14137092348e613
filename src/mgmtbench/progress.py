"""Progress of long work, with an estimate of the time left, on the terminal and nowhere else.

::

    with progress.board(sys.stderr) as shown:          # nothing at all unless it is a terminal
        with progress.task("lab regional", ["namespace", "link", "device", ...],
                           remember_as="lab up tun/netns") as steps:
            ...
            steps.step("namespace")                    # one item of that kind done: its time
                                                       # is the time since the last step

Three parts:

- :class:`Estimate`: the time left for work made of items of kinds (a benchmark function, a lab's
  step): each kind's mean time per item so far, else the time it took in an earlier run
  (``remember_as``: kept in ``~/.cache/mgmtbench/progress.json``), else the mean over every item
  done; scaled by wall time over work done, which learns how many items run at once (xdist) and
  what the gaps between them cost.
- :class:`Board`: a few lines drawn *under* the cursor of a terminal stream, with rich's progress
  columns. Whoever else writes there keeps the cursor where it was (pytest's dots continue on
  their line); before they write a newline, :meth:`Board.hidden` clears the lines and draws them
  again after. It draws only when told (:meth:`Board.refresh`, a step), at most every
  ``interval`` seconds: no thread of its own, so nothing runs beside a timed part.
- :func:`enabled`: on a terminal by default, never otherwise; ``MGMTBENCH_PROGRESS=0`` (or a
  command's ``off``) turns it off, ``MGMTBENCH_PROGRESS=1`` (``on``) forces it on (the lines with
  their control sequences, as on a terminal).

:func:`task` adds a task to the board that is up in this process (:func:`board`), and is a
no-op without one, so library code (a lab's steps) reports progress only when someone watches.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TextIO, TypeVar

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Task as RichTask
from rich.table import Column
from rich.text import Text

from mgmtbench.errors import UsageError

ENV = "MGMTBENCH_PROGRESS"
CHOICES = ("auto", "on", "off")
_ON = frozenset({"1", "on", "yes", "true"})
_OFF = frozenset({"0", "off", "no", "false"})
#: Seconds between two renderings of the lines (~0.5 ms each); a step or a refresh in between
#: draws the last rendering again.
INTERVAL = 0.2
# VT100: save and restore the cursor (DECSC, DECRC), down and up a line in the same column
# (IND, RI: scrolling at the screen's edge), clear the line.
_SAVE, _RESTORE, _DOWN, _UP, _CLEAR = "\x1b7", "\x1b8", "\x1bD", "\x1bM", "\r\x1b[2K"

Clock = Callable[[], float]
T = TypeVar("T")


def choice(setting: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``on``, ``off`` or ``auto``: ``setting`` (a command's option) unless it is ``auto`` or
    None, else ``MGMTBENCH_PROGRESS``; anything else is a :class:`~mgmtbench.errors.UsageError`."""
    env = os.environ if environ is None else environ
    for source, value in (("--progress", setting), (ENV, env.get(ENV))):
        word = (value or "auto").strip().lower()
        if word in _ON:
            return "on"
        if word in _OFF:
            return "off"
        if word != "auto":
            raise UsageError(f"{source}={value!r}: use on (1), off (0) or auto (a terminal only)")
    return "auto"


def enabled(stream: TextIO | None, setting: str | None = None,
            environ: Mapping[str, str] | None = None) -> bool:
    """Whether progress is drawn on ``stream``: forced on or off (:func:`choice`), else only if
    the stream is a terminal (not ``TERM=dumb``)."""
    chosen = choice(setting, environ)
    if chosen != "auto" or stream is None:
        return chosen == "on" and stream is not None
    env = os.environ if environ is None else environ
    try:
        return stream.isatty() and env.get("TERM") != "dumb"
    except (ValueError, OSError):  # a closed or detached stream
        return False


class Estimate:
    """The time left for the items of each kind still to do (see the module's docstring)."""

    def __init__(self, kinds: Iterable[str] = (), prior: Mapping[str, float] | None = None) -> None:
        self.left: Counter[str] = Counter(kinds)
        self.done_items: Counter[str] = Counter()
        self.spent: dict[str, float] = {}  # seconds of work per kind, over the items done
        self.prior = dict(prior or {})  # seconds per item of a kind, from an earlier run

    def add(self, kinds: Iterable[str]) -> None:
        """More items to do."""
        self.left.update(kinds)

    def done(self, kind: str, seconds: float, count: int = 1) -> None:
        """``count`` items of ``kind`` done in ``seconds`` of work."""
        self.left[kind] = max(0, self.left[kind] - count)
        self.done_items[kind] += count
        self.spent[kind] = self.spent.get(kind, 0.0) + max(0.0, seconds)

    @property
    def completed(self) -> int:
        """Items done."""
        return self.done_items.total()

    @property
    def total(self) -> int:
        """Items done and still to do."""
        return self.completed + self.left.total()

    def per_item(self, kind: str) -> float | None:
        """Seconds an item of ``kind`` takes: its kind's mean so far, else the earlier run's,
        else the mean over every item done (None: nothing to go by yet)."""
        if self.done_items[kind]:
            return self.spent[kind] / self.done_items[kind]
        if kind in self.prior:
            return self.prior[kind]
        if self.completed:
            return sum(self.spent.values()) / self.completed
        return None

    def means(self) -> dict[str, float]:
        """Each kind's mean seconds per item over the items done."""
        return {kind: self.spent[kind] / n for kind, n in self.done_items.items() if n}

    def remaining(self, elapsed: float | None = None, *, running: float = 0.0,
                  running_kind: str | None = None) -> float | None:
        """Seconds left (None: no way to tell yet). ``elapsed``: the wall time so far, which
        scales work to wall time once items are done; ``running``: seconds into the item of
        ``running_kind`` under way, taken off that item's share (up to all of it)."""
        work = 0.0
        for kind, count in self.left.items():
            if count:
                each = self.per_item(kind)
                if each is None:
                    return None
                work += count * each
        if running_kind is not None and self.left[running_kind]:
            work -= min(running, self.per_item(running_kind) or 0.0)
        spent = sum(self.spent.values())
        if elapsed is not None and spent > 0:
            work *= elapsed / spent
        return max(0.0, work)


# --- remembered durations ---------------------------------------------------------------------

def cache_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where earlier runs' durations are kept: ``$XDG_CACHE_HOME/mgmtbench/progress.json``
    (``~/.cache`` by default)."""
    env = os.environ if environ is None else environ
    root = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "mgmtbench" / "progress.json"


def remembered(key: str, path: Path | None = None) -> dict[str, float]:
    """Seconds per item of each kind the last run of ``key`` took ({} if none is known)."""
    try:
        data = json.loads((path or cache_file()).read_text())
    except (OSError, ValueError):  # none yet, or unreadable: no estimate before the first item
        return {}
    entry = data.get(key) if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        return {}
    return {str(k): float(v) for k, v in entry.items() if isinstance(v, int | float)}


def remember(key: str, means: Mapping[str, float], path: Path | None = None) -> None:
    """Keep ``means`` as the last run of ``key`` (merged into what is kept for other keys)."""
    file = path or cache_file()
    try:
        data = json.loads(file.read_text())
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[key] = {kind: round(seconds, 3) for kind, seconds in means.items()}
    with contextlib.suppress(OSError):  # an estimate is a nicety: a read-only home loses only it
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_name(f".{file.name}.{os.getpid()}")
        partial.write_text(json.dumps(data, indent=1, sort_keys=True))
        partial.replace(file)


# --- what is drawn ----------------------------------------------------------------------------

def duration(seconds: float | None) -> str:
    """``1:02:03`` (as rich's elapsed time); ``-:--:--`` for an unknown time."""
    if seconds is None:
        return "-:--:--"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


class EtaColumn(ProgressColumn):
    """``ETA 0:03:12``: the task's own estimate (its ``eta`` field, seconds or None)."""

    def render(self, task: RichTask) -> Text:
        """The estimate, or ``-:--:--`` until there is one."""
        if task.finished:
            return Text("done", style="green")
        eta = task.fields.get("eta")
        return Text(f"ETA {duration(eta if isinstance(eta, float | int) else None)}",
                    style="cyan")


class Task:
    """Items of kinds to do, shown as one line of a :class:`Board` (see :func:`task`)."""

    def __init__(self, board: Board, description: str, kinds: Sequence[str], *,
                 noun: str = "steps", prior: Mapping[str, float] | None = None,
                 remember_as: str | None = None) -> None:
        self.board = board
        self.estimate = Estimate(kinds, prior)
        self.remember_as = remember_as
        self.note = ""
        self.running_kind: str | None = None
        self.started = self._last = board.clock()
        self.id: TaskID = board.progress.add_task(description, total=self.estimate.total,
                                                  noun=noun, note="", eta=None)

    def add(self, kinds: Iterable[str]) -> None:
        """More items to do."""
        self.estimate.add(kinds)
        self.board.refresh()

    def begin(self, kind: str | None, note: str = "") -> None:
        """An item of ``kind`` starts (its time so far is taken off the estimate); ``note``:
        what is under way, shown at the end of the line."""
        self.running_kind, self.note = kind, note
        self._last = self.board.clock()
        self.board.refresh()

    def step(self, kind: str, *, count: int = 1, seconds: float | None = None,
             note: str | None = None) -> None:
        """``count`` items of ``kind`` done, in ``seconds`` of work (default: since the last
        step or :meth:`begin`); then drawn if the board's interval has passed."""
        now = self.board.clock()
        self.estimate.done(kind, now - self._last if seconds is None else seconds, count)
        self._last = now
        self.running_kind = None
        if note is not None:
            self.note = note
        self.board.refresh()

    def eta(self) -> float | None:
        """Seconds left, by the estimate."""
        now = self.board.clock()
        return self.estimate.remaining(now - self.started, running=now - self._last,
                                       running_kind=self.running_kind)

    def sync(self) -> None:
        """Copy the counts and the estimate into the rich task that draws them."""
        self.board.progress.update(self.id, completed=self.estimate.completed,
                                   total=max(1, self.estimate.total), eta=self.eta(),
                                   note=self.note)

    def close(self, *, success: bool = True) -> None:
        """Take the line off the board; a task that succeeded keeps its kinds' means for the
        next run (``remember_as``)."""
        self.board.remove(self)
        if success and self.remember_as is not None and self.estimate.completed:
            remember(self.remember_as, {**self.estimate.prior, **self.estimate.means()},
                     self.board.cache)


class Board:
    """Progress lines under the cursor of ``stream`` (see the module's docstring)."""

    def __init__(self, stream: TextIO, *, interval: float = INTERVAL, clock: Clock = time.monotonic,
                 width: int | None = None, cache: Path | None = None) -> None:
        self.stream = stream
        self.interval = interval
        self.clock = clock
        self.width = width
        self.cache = cache
        self.tasks: list[Task] = []
        self.progress = Progress(
            # No markup in a description or a note: test ids have brackets ([local-5cmd]).
            TextColumn("{task.description}", style="bold", markup=False,
                       table_column=Column(no_wrap=True)),
            BarColumn(bar_width=20),
            TextColumn("{task.completed:.0f} of {task.total:.0f} {task.fields[noun]}",
                       table_column=Column(no_wrap=True)),
            TextColumn("elapsed"), TimeElapsedColumn(), EtaColumn(),
            TextColumn("{task.fields[note]}", style="dim", markup=False,
                       table_column=Column(no_wrap=True, overflow="ellipsis")),
            get_time=clock, auto_refresh=False)
        self._lock = threading.RLock()
        self._lines: list[str] = []  # what is drawn now (or would be, while hidden)
        self._drawn = 0  # lines on the terminal now
        self._rendered_at: float | None = None
        self._hidden = 0

    # --- tasks ------------------------------------------------------------------------------

    def task(self, description: str, kinds: Sequence[str], *, noun: str = "steps",
             remember_as: str | None = None) -> Task:
        """A new line: ``kinds``, one per item to do; ``remember_as``: the key under which the
        kinds' times are kept for the next run's first estimate."""
        prior = remembered(remember_as, self.cache) if remember_as is not None else None
        with self._lock:
            added = Task(self, description, kinds, noun=noun, prior=prior,
                         remember_as=remember_as)
            self.tasks.append(added)
        self.refresh(force=True)
        return added

    def remove(self, task: Task) -> None:
        """Take ``task``'s line off (the others are drawn again)."""
        with self._lock:
            if task in self.tasks:
                self.tasks.remove(task)
                self.progress.remove_task(task.id)
                self.refresh(force=True)

    # --- drawing ----------------------------------------------------------------------------

    def render(self) -> list[str]:
        """The tasks' lines as the terminal gets them (colours, no newline), one per task."""
        for task in self.tasks:
            task.sync()
        if not self.tasks:
            return []
        width = self.width or _columns(self.stream)
        out = io.StringIO()
        console = Console(file=out, width=max(20, width - 1), force_terminal=True,
                          color_system="standard", legacy_windows=False, soft_wrap=False)
        console.print(self.progress.make_tasks_table(self.progress.tasks), end="", crop=True)
        return [line.rstrip() for line in out.getvalue().split("\n")][:len(self.tasks)]

    def refresh(self, *, force: bool = False) -> None:
        """Draw the lines again if ``interval`` has passed since the last drawing (or
        ``force``)."""
        with self._lock:
            now = self.clock()
            if (not force and self._rendered_at is not None
                    and now - self._rendered_at < self.interval):
                return
            self._rendered_at = now
            self._lines = self.render()
            if not self._hidden:
                self._draw()

    def clear(self) -> None:
        """Take the lines off the terminal (the cursor stays where it is)."""
        with self._lock:
            if self._drawn:
                self._write(_SAVE + (_DOWN + _CLEAR) * self._drawn + _RESTORE)
                self._drawn = 0

    @contextlib.contextmanager
    def hidden(self) -> Iterator[None]:
        """Off the terminal while others write there; drawn again after (as they were, or newer
        if the interval has passed)."""
        with self._lock:
            self._hidden += 1
            self.clear()
            try:
                yield
            finally:
                self._hidden -= 1
                if not self._hidden:
                    self.refresh()
                    if not self._drawn:
                        self._draw()

    def close(self) -> None:
        """Clear the lines; the board draws nothing more."""
        with self._lock:
            self.clear()
            self.tasks.clear()
            self._lines = []
            self._hidden += 1  # for good

    def _draw(self) -> None:
        lines = self._lines
        if not lines and not self._drawn:
            return
        # Room under the cursor first (scrolls at the screen's bottom), then each line.
        text = _DOWN * len(lines) + _UP * len(lines) + _SAVE
        text += "".join(_DOWN + _CLEAR + line for line in lines)
        text += (_DOWN + _CLEAR) * max(0, self._drawn - len(lines)) + _RESTORE
        self._write(text)
        self._drawn = len(lines)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal: the work goes on without progress
            self._hidden += 1


def _columns(stream: TextIO) -> int:
    """The terminal's width: ``COLUMNS`` if set (as for :func:`shutil.get_terminal_size`), else
    the stream's terminal's, else 100."""
    with contextlib.suppress(ValueError):
        if (columns := int(os.environ.get("COLUMNS", "0"))) > 0:
            return columns
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, io.UnsupportedOperation, AttributeError):
        columns = 0
    return columns if columns > 0 else 100


# --- the board of this process ------------------------------------------------------------------

_current: list[Board] = []


def current() -> Board | None:
    """The board that is up in this process (:func:`board`), if any."""
    return _current[-1] if _current else None


@contextlib.contextmanager
def board(stream: TextIO, setting: str | None = None, *, interval: float = INTERVAL,
          clock: Clock = time.monotonic, cache: Path | None = None) -> Iterator[Board | None]:
    """A :class:`Board` on ``stream`` for the ``with`` block, if :func:`enabled` (else None);
    :func:`task` adds to it meanwhile."""
    if not enabled(stream, setting):
        yield None
        return
    shown = Board(stream, interval=interval, clock=clock, cache=cache)
    with activated(shown):
        yield shown


@contextlib.contextmanager
def activated(shown: Board) -> Iterator[Board]:
    """``shown`` as this process's board for the block; closed at its end."""
    _current.append(shown)
    try:
        yield shown
    finally:
        _current.remove(shown)
        shown.close()


class Steps(Protocol):
    """What :func:`task` gives: a :class:`Task`, or without a board one whose calls do
    nothing."""

    def add(self, kinds: Iterable[str]) -> None:
        """More items to do."""

    def begin(self, kind: str | None, note: str = "") -> None:
        """An item of ``kind`` starts; ``note``: what is under way."""

    def step(self, kind: str, *, count: int = 1, seconds: float | None = None,
             note: str | None = None) -> None:
        """``count`` items of ``kind`` done."""


class _Nothing:
    """What :func:`task` gives when no board is up: every call does nothing."""

    def add(self, kinds: Iterable[str]) -> None:
        """Nothing."""

    def begin(self, kind: str | None, note: str = "") -> None:
        """Nothing."""

    def step(self, kind: str, *, count: int = 1, seconds: float | None = None,
             note: str | None = None) -> None:
        """Nothing."""


@contextlib.contextmanager
def task(description: str, kinds: Sequence[str], *, noun: str = "steps",
         remember_as: str | None = None) -> Iterator[Steps]:
    """A line on this process's board for the block (see :meth:`Board.task`); without a board,
    an object whose calls do nothing. A block that raises does not update ``remember_as``."""
    shown = current()
    if shown is None:
        yield _Nothing()
        return
    added = shown.task(description, kinds, noun=noun, remember_as=remember_as)
    success = False
    try:
        yield added
        success = True
    finally:
        added.close(success=success)


def hidden() -> contextlib.AbstractContextManager[None]:
    """This process's board off the terminal for the block (while something else writes there);
    nothing without a board."""
    shown = current()
    return shown.hidden() if shown is not None else contextlib.nullcontext()


@contextlib.contextmanager
def rounds(description: str, count: int, *, sessions: int = 0,
           setup: Callable[[], T] | None = None) -> Iterator[Callable[[], T | None]]:
    """Rounds of a benchmark on this process's board: yields a ``setup`` for
    ``benchmark.pedantic(..., setup=...)``, which runs outside the timed part: each call ends the
    round before (its time: from the call before to this one), begins the next, then calls
    ``setup`` (its return value: pedantic's arguments). ``sessions``: per round, for the line's
    note (``300 of 1,000 sessions``)."""
    with task(description, ["round"] * count, noun="rounds") as shown:
        started = 0

        def note(done: int) -> str:
            return f"{done * sessions:,} of {count * sessions:,} sessions" if sessions else ""

        def next_round() -> T | None:
            nonlocal started
            if started:
                shown.step("round", note=note(started))
            started += 1
            shown.begin("round", note(started - 1))
            return setup() if setup is not None else None

        yield next_round
        if started:
            shown.step("round", note=note(started))
