"""Everything the lab reads from (or writes to) ``/proc``: capabilities, a process's CPU time and
memory, a process's network namespace, and sysctls.

Readers of another process tolerate its exit: they raise ``OSError`` (the process is gone) or
``ValueError`` (an unexpected format), and callers that sum over processes skip those.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21


def effective_capabilities() -> int | None:
    """This process's effective capability set (a bit mask), None where /proc does not say."""
    try:
        for line in (PROC / "self" / "status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        pass
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid``, all its threads (``/proc/PID/stat``)."""
    # Fields after the command name (which may hold spaces and parentheses): utime, stime are
    # fields 14 and 15 of the line, 12 and 13 after the name.
    fields = (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()
    try:
        return (int(fields[11]) + int(fields[12])) / TICK
    except IndexError:
        raise ValueError(f"/proc/{pid}/stat: too few fields") from None


def threads_cpu_seconds(pid: int) -> float:
    """CPU time of ``pid``'s live threads at nanosecond resolution (``/proc/PID/task/*/
    schedstat``), where :func:`cpu_seconds` counts clock ticks (10 ms): for differences over
    short runs of a process whose threads live through them (an exited thread's time leaves
    the sum). :func:`cpu_seconds` where the kernel keeps no schedstat."""
    if not (PROC / str(pid) / "schedstat").exists():
        return cpu_seconds(pid)  # OSError if the process is gone
    total = 0
    for task in (PROC / str(pid) / "task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:  # the thread exited meanwhile
            continue
        except IndexError:
            raise ValueError(f"{task}/schedstat: no fields") from None
    return total / 1e9


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` (``/proc/PID/statm``)."""
    fields = (PROC / str(pid) / "statm").read_text().split()
    try:
        return int(fields[1]) * PAGE
    except IndexError:
        raise ValueError(f"/proc/{pid}/statm: too few fields") from None


def stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (which may hold spaces and
    parentheses): index 0 is the state (field 3 of the line), index 19 the start time (field 22)."""
    fields = (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()
    if len(fields) < 20:
        raise ValueError(f"/proc/{pid}/stat: too few fields")
    return fields


def start_time(pid: int) -> int:
    """When process ``pid`` started, in clock ticks since boot (``/proc/PID/stat`` field 22):
    with the pid, who the process is (a pid is reused, a pid and its start time are not)."""
    return int(stat_fields(pid)[19])


def environment(pid: int) -> list[bytes]:
    """The environment process ``pid`` was started with (``/proc/PID/environ``), as
    ``NAME=value`` entries; empty for a kernel thread or a zombie."""
    return (PROC / str(pid) / "environ").read_bytes().split(b"\0")


def process_exists(pid: int) -> bool:
    """Whether process ``pid`` exists (``/proc/PID``)."""
    return (PROC / str(pid)).exists()


def netns_of(pid: int) -> Path:
    """The network namespace of process ``pid``, as a path ``setns`` opens."""
    return PROC / str(pid) / "ns" / "net"


def write_sysctl(name: str, value: str) -> None:
    """Set sysctl ``name`` (``net.ipv4.ip_forward``) in the calling thread's namespace."""
    (PROC / "sys").joinpath(*name.split(".")).write_text(value)


def disable_ipv6(interface: str = "all") -> None:
    """No IPv6 on ``interface`` (``all``, ``default`` or a name): the lab speaks IPv4, and keeps
    router solicitations out of its packet counts."""
    write_sysctl(f"net.ipv6.conf.{interface}.disable_ipv6", "1")
