"""Each emulated device's clock starts at the host's time (or a time given with ``mgmtbench serve
--clock-start``, ``transcript`` for the transcripts' moment), and everything the device shows as
a time comes from that one clock: ``show clock``, the boot time, ``dir``'s file times, archive
names, the running configuration's header and the time a change is stamped with."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from mgmtbench.cli import build_parser
from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.command import options_from_args
from mgmtbench.emulator.device.clock import boot_offset, clock_spec
from mgmtbench.emulator.device.transcripts import available_platforms

GIVEN = "2024-03-05T06:07:08Z"
GIVEN_AT = datetime(2024, 3, 5, 6, 7, 8, tzinfo=UTC)
#: How each ``clock_format`` words the clock, for strptime.
CLOCK_PARSE = {"cisco": "%H:%M:%S.%f %Z %a %b %d %Y", "eos": "%a %b %d %H:%M:%S %Y",
               "junos": "%Y-%m-%d %H:%M:%S %Z"}
SERVE = [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", "0", "--https-port", "0"]


def make_device(platform: str, clock_start: datetime | str | None = None) -> Device:
    loaded = load_platform(platform)
    return Device(loaded, DeviceFacts.for_hostname("R1", form=loaded.style.identity.facts),
                  enable_secret="x", clock_start=clock_start)


def shown_clock(device: Device) -> datetime:
    """What the device's clock says, read from the output of the command that shows it (the
    transcript with ``{{clock}}``: ``show clock``, Junos's ``show system uptime``)."""
    words, template = next((w, t) for w, t in device.platform.transcripts.items()
                           if "{{clock}}" in t)
    line = next(line for line in template.splitlines() if "{{clock}}" in line)
    head, tail = line.split("{{clock}}")
    out = CliSession(device, mode=Mode.PRIV).execute(" ".join(words)).text()
    found = re.search(rf"^{re.escape(head)}(.+){re.escape(tail)}$", out, re.M)
    assert found, out
    form = clock_spec(device.platform).clock_format
    return datetime.strptime(found.group(1).strip(), CLOCK_PARSE[form]).replace(tzinfo=UTC)


def to_minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def near(moment: datetime, expected: datetime, seconds: float = 5) -> bool:
    return abs((moment - expected).total_seconds()) <= seconds


@pytest.mark.parametrize("platform", available_platforms())
def test_the_clock_starts_at_the_host_time_by_default(platform: str) -> None:
    device = make_device(platform)
    assert near(shown_clock(device), datetime.now(UTC))
    # Up as long as the platform's transcripts say, plus the hostname's spread: booted that long
    # before the clock's start.
    spec = clock_spec(device.platform)
    up = spec.uptime + boot_offset("R1", spec.spread)
    assert device.clock.boot == device.clock.start - timedelta(seconds=up)
    assert abs(device.clock.uptime() - up) <= 2


@pytest.mark.parametrize("platform", available_platforms())
def test_a_given_start_or_the_transcripts_moment(platform: str) -> None:
    assert near(shown_clock(make_device(platform, GIVEN)), GIVEN_AT)
    assert near(shown_clock(make_device(platform, "2024-03-05T07:07:08+01:00")), GIVEN_AT)
    captured = clock_spec(load_platform(platform)).start
    assert near(shown_clock(make_device(platform, "transcript")), captured)


def test_the_transcripts_moment_gives_the_transcripts_header() -> None:
    device = make_device("cisco_ios", "transcript")
    text = device.transcript(("show", "running-config"))
    assert "! Last configuration change at 09:12:44 UTC Fri Nov 20 2026 by netadmin\n" in text
    assert "! NVRAM config last updated at 09:13:02 UTC Fri Nov 20 2026 by netadmin\n" in text


def test_serve_flag_reaches_the_options() -> None:
    args = build_parser().parse_args(["serve", "--clock-start", GIVEN])
    assert options_from_args(args).clock_start == GIVEN
    assert options_from_args(build_parser().parse_args(["serve"])).clock_start is None


@pytest.mark.parametrize("value", ["yesterday", "2024-13-01", "14:03"])
def test_a_bad_clock_start_is_one_line(value: str) -> None:
    done = subprocess.run([*SERVE, "--clock-start", value], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    err = done.stderr.strip()
    assert "\n" not in err
    assert "Traceback" not in err
    assert err.startswith(f"mgmtbench: error: --clock-start {value!r}: give an ISO 8601 time")


def test_show_clock_dir_and_header_agree_on_a_given_start(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    device = fresh_emulator("cisco_ios", clock_start=GIVEN).endpoints[0].device
    cli = CliSession(device, mode=Mode.PRIV, user="netadmin")
    cli.execute("copy running-config flash:clock.cfg")
    clock = to_minute(shown_clock(device))
    assert clock == to_minute(GIVEN_AT)
    listing = cli.execute("dir").text()
    found = re.search(r"(\w{3} \d\d \d{4} \d\d:\d\d):\d\d \+00:00  clock\.cfg$", listing, re.M)
    assert found, listing
    assert datetime.strptime(found.group(1), "%b %d %Y %H:%M").replace(tzinfo=UTC) == clock
    # The header's times are the capture's history, as long before the clock's start as they
    # were before the capture's moment (2 days 4:50:27 and 18 s later).
    text = device.transcript(("show", "running-config"))
    header = re.search(r"^! Last configuration change at (.+) by netadmin$", text, re.M)
    assert header
    changed = datetime.strptime(header.group(1), "%H:%M:%S %Z %a %b %d %Y").replace(tzinfo=UTC)
    assert changed == GIVEN_AT - timedelta(days=2, hours=4, minutes=50, seconds=27)
    assert "! Last configuration change at 01:16:41 UTC Sun Mar 3 2024 by netadmin\n" in text
    assert "! NVRAM config last updated at 01:16:59 UTC Sun Mar 3 2024 by netadmin\n" in text
    # The file copied holds the same header.
    copied = device.files.open(device.files.resolve("clock.cfg"))
    assert "at 01:16:41 UTC Sun Mar 3 2024" in copied.read(0, copied.size).decode()


def test_file_times_and_archive_names_follow_the_clock() -> None:
    device = make_device("cisco_ios", GIVEN)
    cli = CliSession(device, mode=Mode.PRIV, user="netadmin")
    for line in ("configure terminal", "archive", "path flash:arch", "write-memory", "end",
                 "write memory"):
        cli.execute(line)
    [name] = device.saved.archive
    assert re.fullmatch(r"flash:arch-Mar-05-06-07-\d\d\.\d{3}-UTC-0", name), name
    entry = device.files.stat(device.files.resolve(name))
    assert near(datetime.fromtimestamp(entry.mtime, UTC), GIVEN_AT)
    device.clock.advance(3600)  # an hour on: the next file is an hour later
    cli.execute("write memory")
    assert re.fullmatch(r"flash:arch-Mar-05-07-07-\d\d\.\d{3}-UTC-1", device.saved.archive[-1])


@pytest.mark.parametrize(("platform", "command", "header", "form"), [
    ("cisco_nxos", "show running-config", r"^!Running configuration last done at: (.+)$",
     "%a %b %d %H:%M:%S %Y"),
    ("cisco_asa", "show version", r"^Configuration last modified by \S+ at (.+)$",
     "%H:%M:%S.%f %Z %a %b %d %Y"),
])
def test_other_headers_follow_the_clock_start(platform: str, command: str, header: str,
                                              form: str) -> None:
    """The same time before the clock's start as before the capture's moment."""
    times = []
    for start in (GIVEN, "transcript"):
        device = make_device(platform, start)
        found = re.search(header, device.transcript(tuple(command.split())), re.M)
        assert found
        times.append(datetime.strptime(found.group(1), form).replace(tzinfo=UTC)
                     - device.clock.start)
    assert abs((times[0] - times[1]).total_seconds()) < 1
    assert times[0] < -timedelta(days=2)


def test_nxos_running_config_time_is_the_clock() -> None:
    device = make_device("cisco_nxos", GIVEN)
    found = re.search(r"^!Time: (.+)$", device.transcript(("show", "running-config")), re.M)
    assert found
    assert near(datetime.strptime(found.group(1), "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC),
                GIVEN_AT)


def test_junos_commits_and_header_follow_the_clock() -> None:
    device = make_device("juniper_junos", GIVEN)
    shown = device.transcript(("show", "configuration"))
    assert shown.startswith("## Last commit: 2024-03-02 09:37:35 UTC by admin\n")
    cli = CliSession(device, mode=Mode.PRIV, user="netops")
    for line in ("configure", "set system location building-2", "commit", "exit"):
        cli.execute(line)
    shown = cli.execute("show configuration").text()
    assert shown.startswith("## Last commit: 2024-03-05 06:07:"), shown[:80]


def test_braces_typed_into_the_configuration_stay_as_typed() -> None:
    device = make_device("cisco_ios", GIVEN)
    cli = CliSession(device, mode=Mode.PRIV, user="netadmin")
    for line in ("configure terminal", "interface Loopback9",
                 "description {{clock}} {{nothing}} {{time_changed}}", "end"):
        cli.execute(line)
    text = device.transcript(("show", "running-config"))
    assert " description {{clock}} {{nothing}} " in text
    assert "! Last configuration change at 01:16:41 UTC Sun Mar 3 2024 by netadmin\n" in text
