"""What happens on a device besides its configuration: the CLI sessions open on it and the
events it logs, kept on the device (:attr:`Device.activity
<mgmtbench.emulator.device.device.Device.activity>`) for every platform alike.

- :class:`CliLines`: the CLI sessions open now (an SSH shell, an SSH exec), each on a line of its
  own (``vty 0``, ``vty 1`` ...: the lowest free one, as a device hands them out), with who
  opened it, from where, when, and when it last ran a command (``show users``);
- :class:`EventLog`: what the device logged since it started (a configuration session ended, a
  login succeeded or failed, a session closed), each event with the device clock's time and its
  fields, the newest :data:`MAX_EVENTS` kept. Events carry no wording: a platform's ``show
  logging`` words them (:mod:`mgmtbench.emulator.cli.dialects.ios`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

#: Events kept: a ``show logging`` buffer of any size holds fewer lines than this.
MAX_EVENTS = 2048


@dataclass(eq=False)
class CliLine:
    """One open CLI session: the line it holds (0 for ``vty 0``), its kind (``shell``,
    ``exec``), who and from where, the device clock's elapsed seconds when it opened and when it
    last ran a command, and the session object itself (how ``show users`` finds the caller)."""

    number: int
    kind: str
    user: str
    peer: str
    opened: float
    session: object = None
    last: float = 0.0

    def idle(self, now: float) -> int:
        """Whole seconds since the session last ran a command (or opened)."""
        return max(0, int(now - max(self.last, self.opened)))


class CliLines:
    """The CLI sessions open on a device (see the module docstring)."""

    def __init__(self, elapsed: Callable[[], float]) -> None:
        self._elapsed = elapsed
        self._open: list[CliLine] = []

    def open(self, session: object, kind: str, user: str = "", peer: str = "") -> CliLine:
        """A session opens: it takes the lowest free line."""
        taken = {line.number for line in self._open}
        number = next(n for n in range(len(taken) + 1) if n not in taken)
        now = self._elapsed()
        line = CliLine(number, kind, user, peer, now, session, now)
        self._open.append(line)
        self._open.sort(key=lambda item: item.number)
        return line

    def close(self, line: CliLine) -> None:
        """A session ended: its line is free again."""
        if line in self._open:
            self._open.remove(line)

    def touch(self, line: CliLine) -> None:
        """The session ran a command now (its idle time starts again)."""
        line.last = self._elapsed()

    def find(self, session: object) -> CliLine | None:
        """The line ``session`` holds, if it is registered."""
        return next((line for line in self._open if line.session is session), None)

    def free_number(self) -> int:
        """The line a session that is not registered would take."""
        taken = {line.number for line in self._open}
        return next(n for n in range(len(taken) + 1) if n not in taken)

    def __iter__(self) -> Iterator[CliLine]:
        return iter(list(self._open))

    def __len__(self) -> int:
        return len(self._open)


@dataclass(frozen=True)
class Event:
    """One thing the device logged: its kind (``config``, ``login``, ``login_failed``,
    ``logout``), when (the device clock), and its fields (``user``, ``peer``, ``line`` ...)."""

    kind: str
    time: datetime
    fields: dict[str, str] = field(default_factory=dict)


class EventLog:
    """What a device logged since it started, the newest :data:`MAX_EVENTS` (see the module
    docstring). ``count`` is every event ever logged (a platform numbers its log lines on)."""

    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now
        self._events: deque[Event] = deque(maxlen=MAX_EVENTS)
        self.count = 0

    def add(self, kind: str, **fields: str) -> Event:
        """Log an event of ``kind`` now."""
        event = Event(kind, self._now(), dict(fields))
        self._events.append(event)
        self.count += 1
        return event

    def __iter__(self) -> Iterator[Event]:
        return iter(list(self._events))

    def __len__(self) -> int:
        return len(self._events)


class Activity:
    """A device's open CLI sessions (:attr:`lines`) and its logged events (:attr:`events`),
    both on the device's clock."""

    def __init__(self, elapsed: Callable[[], float], now: Callable[[], datetime]) -> None:
        self.lines = CliLines(elapsed)
        self.events = EventLog(now)

    def config_ended(self, session: object, user: str, peer: str) -> None:
        """A session left configuration mode (``end``, Ctrl-Z, ``exit``)."""
        line = self.lines.find(session)
        number = line.number if line is not None else 0
        self.events.add("config", user=user, peer=peer, line=str(number))

    def login(self, user: str, peer: str, port: str) -> None:
        """Someone logged in (SSH)."""
        self.events.add("login", user=user, peer=peer, port=port)

    def login_failed(self, user: str, peer: str, port: str) -> None:
        """A login was refused (a wrong password)."""
        self.events.add("login_failed", user=user, peer=peer, port=port)

    def open_session(self, session: object, kind: str, user: str = "",
                     peer: str = "") -> CliLine:
        """A CLI session opens (:meth:`CliLines.open`)."""
        return self.lines.open(session, kind, user, peer)

    def close_session(self, line: CliLine) -> None:
        """A CLI session closes; a shell's end is logged (``logout``)."""
        self.lines.close(line)
        if line.kind == "shell":
            self.events.add("logout", user=line.user, peer=line.peer, line=str(line.number))
