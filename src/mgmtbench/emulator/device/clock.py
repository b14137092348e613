"""A device's clock and uptime, running from the moment the emulator made the device.

``[clock]`` in the platform's ``platform.toml`` says what the clock read and how long the device
had been up when the transcripts were captured (``start``: the capture's moment), and how uptime
is worded. A device's clock starts at the host's time when the emulator makes it (UTC), or at a
time given (``mgmtbench serve --clock-start``: an ISO 8601 time, or ``transcript`` for the
capture's moment, which gives the transcripts byte for byte), and runs in real time. The device
has been up the platform's ``uptime`` at that start, plus a number of seconds derived from its
hostname (0 to ``spread``), so the devices of a fleet have been up for different times, the same
ones on every run. Everything the device shows as a time comes from its one clock: ``show
clock``, uptimes, the boot time, configuration headers, file times (:attr:`DeviceClock.epoch`),
archive names.

Transcripts use the placeholders ``{{clock}}``, ``{{uptime}}`` and ``{{restarted}}`` (the boot
time), and the extra ones a platform declares in ``[clock.placeholders]``, each of a ``kind``
(:data:`KINDS`), offset by seconds, in the platform's form or one of its own (``form =
"junos"``): an ``uptime``; a ``time`` from the boot; a ``start`` time from the clock's start
(what happened before it: the configuration's last change two days earlier); a ``now`` time,
the clock's reading in a time form (NX-OS's ``!Time:``).

How each is worded is the platform's (``clock_format``, ``time_format``, ``uptime_format``):
:data:`CLOCK_FORMS`, :data:`TIME_FORMS` and :data:`UPTIME_FORMS` name the forms.

Outputs that show the clock, uptimes or counters change from one moment to the next, so checks
compare them with the platform's volatile and counter masks (:mod:`mgmtbench.targets.stable`,
as for real devices): see :func:`mgmtbench.emulator.oracle.stable_output`.
"""

from __future__ import annotations

import hashlib
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from mgmtbench.emulator.device.transcripts import PLACEHOLDER, Platform, default_root

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DYNAMIC = frozenset({"clock", "uptime", "restarted"})
#: ``[clock.placeholders]`` kinds: an uptime, or a time from the boot, from the clock's start
#: or from now.
KINDS = frozenset({"uptime", "time", "start", "now"})
#: ``--clock-start``'s word for the transcripts' moment (``[clock] start``).
TRANSCRIPT_MOMENT = "transcript"


@dataclass(frozen=True)
class ClockSpec:
    """``[clock]`` of a platform."""

    start: datetime  # the transcripts' moment: what the clock read at the capture
    timezone: str = "UTC"
    uptime: int = 0  # seconds up at the clock's start, before the per-device offset
    spread: int = 0
    uptime_format: str = "weeks"
    #: How ``{{clock}}`` and the times (``{{restarted}}``, ``time_*``) are worded.
    clock_format: str = "cisco"
    time_format: str = "cisco"
    #: name -> (its kind, one of :data:`KINDS`; seconds added to the uptime / to the time; its
    #: form: "" for the platform's)
    placeholders: Mapping[str, tuple[str, float, str]] = None  # type: ignore[assignment]


DEFAULT = ClockSpec(start=datetime(2026, 11, 22, 14, 3, 11, 512000, tzinfo=UTC))


def clock_spec(platform: Platform) -> ClockSpec:
    """The platform's clock settings (defaults when its ``platform.toml`` has no ``[clock]``)."""
    folder = getattr(platform, "folder", None)
    return _spec(Path(folder) if folder else default_root() / platform.name)


@cache
def _spec(folder: Path) -> ClockSpec:
    path = folder / "platform.toml"
    raw = tomllib.loads(path.read_text(encoding="utf-8")).get("clock") if path.is_file() else None
    if not raw:
        return DEFAULT
    start = datetime.fromisoformat(str(raw["start"])).replace(tzinfo=UTC)
    extra = {str(k): (str(v["kind"]), float(v["offset"]), str(v.get("form", "")))
             for k, v in dict(raw.get("placeholders", {})).items()}
    for name, (kind, _, form) in extra.items():
        if kind not in KINDS:
            raise ValueError(f"{path}: [clock.placeholders] {name}: kind {kind!r} "
                             f"(known: {sorted(KINDS)})")
        forms = UPTIME_FORMS if kind == "uptime" else TIME_FORMS
        if form and form not in forms:
            raise ValueError(f"{path}: [clock.placeholders] {name}: form {form!r} "
                             f"(known: {sorted(forms)})")
    spec = ClockSpec(start=start, timezone=str(raw.get("timezone", "UTC")),
                     uptime=int(raw.get("uptime", 0)), spread=int(raw.get("spread", 0)),
                     uptime_format=str(raw.get("uptime_format", "weeks")),
                     clock_format=str(raw.get("clock_format", "cisco")),
                     time_format=str(raw.get("time_format", "cisco")), placeholders=extra)
    for key, value, known in (("uptime_format", spec.uptime_format, UPTIME_FORMS),
                              ("clock_format", spec.clock_format, CLOCK_FORMS),
                              ("time_format", spec.time_format, TIME_FORMS)):
        if value not in known:
            raise ValueError(f"{path}: [clock] {key} {value!r} (known: {sorted(known)})")
    return spec


def parse_start(text: str) -> datetime | None:
    """A clock start as ``--clock-start`` gives it: an ISO 8601 time (UTC when it names no
    zone), or None for :data:`TRANSCRIPT_MOMENT`; ValueError, in one line, for anything else."""
    if text.strip() == TRANSCRIPT_MOMENT:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r}: give an ISO 8601 time (2026-11-22T14:03:11Z) or "
                         f"{TRANSCRIPT_MOMENT!r} (the transcripts' moment)") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def start_moment(spec: ClockSpec, start: datetime | str | None) -> datetime:
    """What a device's clock reads when it is made: ``start`` (a time, or ``--clock-start``'s
    text, :func:`parse_start`), the transcripts' moment for :data:`TRANSCRIPT_MOMENT`, the host's
    time now (UTC) for None."""
    if start is None:
        return datetime.now(UTC)
    if isinstance(start, str):
        return parse_start(start) or spec.start
    return start if start.tzinfo is not None else start.replace(tzinfo=UTC)


def fill(template: str, facts: Mapping[str, str]) -> str:
    """Fill the ``{{name}}`` placeholders that ``facts`` has; leave the others (the clock's)."""
    return PLACEHOLDER.sub(lambda m: facts.get(m.group(1), m.group(0)), template)


def boot_offset(hostname: str, spread: int) -> int:
    """Seconds a device booted before the platform's reference boot: from its hostname."""
    if spread <= 0:
        return 0
    digest = hashlib.sha256(b"boot:" + hostname.encode()).digest()
    return int.from_bytes(digest[:8], "big") % (spread + 1)


class DeviceClock:
    """One device's clock: it reads ``start`` when made (:func:`start_moment`: the host's time
    by default) and runs in real time."""

    def __init__(self, spec: ClockSpec, hostname: str,
                 start: datetime | str | None = None) -> None:
        self.spec = spec
        self._made = time.monotonic()
        #: What the clock read when the device was made.
        self.start = start_moment(spec, start)
        self._offset = boot_offset(hostname, spec.spread)
        self.boot = self.start - timedelta(seconds=spec.uptime + self._offset)
        self._uptimes: dict[str, tuple[int, str]] = {}  # name -> (minute, its words)
        # The times that do not move: the boot, and the platform's times from the boot or the
        # start.
        self._fixed = {"restarted": TIME_FORMS[spec.time_format](self.boot, spec.timezone)}
        origins = {"time": self.boot, "start": self.start}
        for name, (kind, offset, form) in (spec.placeholders or {}).items():
            if kind in origins:
                self._fixed[name] = self.time_text(origins[kind] + timedelta(seconds=offset),
                                                   form)

    def time_text(self, moment: datetime, form: str = "") -> str:
        """``moment`` as the platform words a time (``form``: one of :data:`TIME_FORMS`, "" for
        the platform's ``time_format``)."""
        return TIME_FORMS[form or self.spec.time_format](moment, self.spec.timezone)

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` on at once (tests: a revert timer that runs out)."""
        self._made -= seconds

    def elapsed(self) -> float:
        """Seconds since the device was made."""
        return time.monotonic() - self._made

    def now(self) -> datetime:
        """What the device's clock reads."""
        return self.start + timedelta(seconds=self.elapsed())

    def epoch(self) -> float:
        """What the device's clock reads, in seconds since 1970 (file times)."""
        return self.now().timestamp()

    def uptime(self) -> int:
        """Whole seconds the device has been up."""
        return int((self.now() - self.boot).total_seconds())

    def values(self) -> dict[str, str]:
        """The dynamic placeholders' text as of now."""
        return {name: self.value(name) for name in
                ("clock", "uptime", "restarted", *(self.spec.placeholders or {}))}

    def value(self, name: str) -> str:
        """One dynamic placeholder's text as of now (times before now are worked out once)."""
        fixed = self._fixed.get(name)
        if fixed is not None:
            return fixed
        if name == "clock":
            return CLOCK_FORMS[self.spec.clock_format](self.now(), self.spec.timezone)
        offset, form = 0.0, self.spec.uptime_format
        if name != "uptime":
            kind, offset, own = (self.spec.placeholders or {})[name]
            if kind == "now":
                return self.time_text(self.now() + timedelta(seconds=offset), own)
            form = own or form
        if form == "bsd":  # the time of day too: worked out each time
            return bsd_uptime_text(self.now(), self.uptime() + int(offset))
        up = int(self.spec.uptime + self._offset + self.elapsed()) + int(offset)
        # The words change once a minute (an hour on), unless they show seconds.
        step = up // 60 if up >= 3600 and form not in _SECONDS_FORMS else -up
        kept = self._uptimes.get(name)
        if kept is None or kept[0] != step:
            kept = (step, uptime_text(up, form))
            self._uptimes[name] = kept
        return kept[1]


def clock_text(moment: datetime, tz: str) -> str:
    """``14:03:11.512 UTC Sun Nov 22 2026`` (Cisco ``show clock``)."""
    return (f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}."
            f"{moment.microsecond // 1000:03d} {tz} {_DAYS[moment.weekday()]} "
            f"{_MONTHS[moment.month - 1]} {moment.day} {moment.year}")


def time_text(moment: datetime, tz: str) -> str:
    """``09:46:11 UTC Thu Aug 27 2026`` (Cisco ``show version``'s restart time)."""
    return (f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} {tz} "
            f"{_DAYS[moment.weekday()]} {_MONTHS[moment.month - 1]} {moment.day} {moment.year}")


def eos_clock_text(moment: datetime, tz: str) -> str:
    """``Mon Nov 23 05:42:17 2026`` (EOS ``show clock``; the time zone is on a line of its own)."""
    return (f"{_DAYS[moment.weekday()]} {_MONTHS[moment.month - 1]} {moment.day:2d} "
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} {moment.year}")


def junos_time_text(moment: datetime, tz: str) -> str:
    """``2026-11-23 05:42:17 UTC`` (Junos ``show system uptime``)."""
    return f"{moment:%Y-%m-%d %H:%M:%S} {tz}"


def nxos_time_text(moment: datetime, tz: str) -> str:
    """``Fri Oct  9 01:28:55 2026`` (NX-OS ``show version``'s last reset, C's ``ctime``)."""
    return (f"{_DAYS[moment.weekday()]} {_MONTHS[moment.month - 1]} {moment.day:2d} "
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} {moment.year}")


def bsd_uptime_text(moment: datetime, seconds: int) -> str:
    """`` 5:42AM  up 44 days,  4:13`` (the start of FreeBSD's ``uptime`` line, as Junos's
    ``show system uptime`` ends)."""
    hour = moment.hour % 12 or 12
    days, rest = divmod(max(seconds, 0), 86400)
    hours, minutes = rest // 3600, rest // 60 % 60
    up = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    up += f"{hours:2d}:{minutes:02d}" if hours else f"{minutes} min{'s' if minutes != 1 else ''}"
    return f"{hour:2d}:{moment.minute:02d}{'AM' if moment.hour < 12 else 'PM'}  up {up}"


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def uptime_text(seconds: int, form: str) -> str:
    """An uptime as the platform words it: ``weeks`` (IOS: ``12 weeks, 3 days, 4 hours, 17
    minutes``, zero units left out), ``days`` (ASA: ``12 days 3 hours``), ``eos`` (``6 weeks, 2
    days, 4 hours and 13 minutes``), ``eos_env`` (``44 days, 4:13:15``: EOS's fan and power
    supply uptimes), ``nxos`` (``44 day(s), 4 hour(s), 13 minute(s), 22 second(s)``) or
    ``junos`` (``6w2d 04:13``, ``2d 20:29``, ``04:13:22`` under a day)."""
    minutes, hours, days = seconds // 60 % 60, seconds // 3600 % 24, seconds // 86400
    if form == "eos":  # every unit, always plural, as EOS prints them
        return f"{days // 7} weeks, {days % 7} days, {hours} hours and {minutes} minutes"
    if form == "eos_env":  # Python's timedelta, as EOS's environment tables print it
        return str(timedelta(seconds=max(seconds, 0)))
    if form == "nxos":
        return (f"{days} day(s), {hours} hour(s), {minutes} minute(s), "
                f"{seconds % 60} second(s)")
    if form == "junos":
        if days >= 7:
            return f"{days // 7}w{days % 7}d {hours:02d}:{minutes:02d}"
        if days:
            return f"{days}d {hours:02d}:{minutes:02d}"
        return f"{hours:02d}:{minutes:02d}:{seconds % 60:02d}"
    if form == "days":
        if days:
            return f"{_plural(days, 'day')} {_plural(hours, 'hour')}"
        if hours:
            return f"{_plural(hours, 'hour')} {_plural(minutes, 'min')}"
        return f"{_plural(minutes, 'min')} {_plural(seconds % 60, 'sec')}"
    years, weeks, days = days // 365, days % 365 // 7, days % 365 % 7
    parts = [_plural(n, unit) for n, unit in ((years, "year"), (weeks, "week"), (days, "day"),
                                              (hours, "hour")) if n]
    parts.append(_plural(minutes, "minute"))
    return ", ".join(parts)


#: ``clock_format``: how ``{{clock}}`` is worded.
CLOCK_FORMS = {"cisco": clock_text, "eos": eos_clock_text, "junos": junos_time_text}
#: ``time_format`` (and a time placeholder's ``form``): how a time is worded (``cisco_ms``: with
#: milliseconds, as ``show clock``).
TIME_FORMS = {"cisco": time_text, "cisco_ms": clock_text, "nxos": nxos_time_text,
              "junos": junos_time_text}
#: ``uptime_format`` (and an ``uptime`` placeholder's ``form``): how an uptime is worded;
#: ``bsd`` is the head of FreeBSD's ``uptime`` line, the time of day included.
UPTIME_FORMS = frozenset({"weeks", "days", "eos", "eos_env", "nxos", "junos", "bsd"})
_SECONDS_FORMS = frozenset({"nxos", "junos", "eos_env"})
