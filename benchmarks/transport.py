"""What the transport-mode benchmark needs besides pytest: commands, expected outputs, a driver
that runs sync and async adapters the same way, and the numbers that go into ``extra_info``."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import statistics
from typing import Any

from conftest import ClientKeys, LabLike, make_target
from mgmtbench.clients import AsyncClient, Client, Target
from mgmtbench.emulator import Device, DeviceFacts, load_platform
from mgmtbench.lab.calibrate import percentile

SHOW_COMMANDS = {
    "cisco_ios": ["show version", "show clock", "show ip interface brief", "show inventory",
                  "show ip route", "show ip arp", "show cdp neighbors", "show ip ospf neighbor"],
    "cisco_asa": ["show version", "show clock", "show interface ip brief", "show inventory",
                  "show route", "show failover", "show xlate", "show conn count"],
}


def command_list(platform: str, count: int) -> list[str]:
    """``count`` show commands, cycling through the platform's everyday ones."""
    return list(itertools.islice(itertools.cycle(SHOW_COMMANDS[platform]), count))


def expected_output(platform: str, hostname: str, address: str, commands: list[str]) -> str:
    """What the device at ``address`` must answer (its facts: hostname and management address)."""
    facts = DeviceFacts.for_hostname(hostname, mgmt_ip=address)
    device = Device(load_platform(platform), facts, enable_secret="-")
    return "".join(device.transcript(tuple(c.split())) for c in commands)


def fleet_targets(lab: LabLike, keys: ClientKeys, command: str, count: int | None = None,
                  platform: str = "cisco_ios") -> tuple[list[Target], list[str]]:
    """Targets for the first ``count`` devices of ``lab`` (all by default) and the sha256 of
    what each must answer to ``command`` (its own hostname and address), for a fleet worker."""
    devices = lab.devices if count is None else lab.devices[:count]
    targets = [make_target(d.address, d.ssh_port, d.https_port, platform=platform,
                           ca_file=lab.ca_file, known_hosts=lab.known_hosts, keys=keys)
               for d in devices]
    digests = [hashlib.sha256(expected_output(platform, d.hostname, d.reported_ip, [command])
                              .encode("ascii")).hexdigest() for d in devices]
    return targets, digests


class Driver:
    """Runs a sync or async adapter; async ones on one persistent event loop (not asyncio.run
    per round, whose loop set-up would be timed)."""

    def __init__(self, client: Client | AsyncClient) -> None:
        self.client = client
        self.loop = asyncio.new_event_loop() if isinstance(client, AsyncClient) else None

    def setup(self) -> None:
        self._call("setup")

    def run(self, commands: list[str]) -> str:
        return str(self._call("run", commands))

    def teardown(self) -> None:
        try:
            self._call("teardown")
        finally:
            if self.loop is not None:
                self.loop.close()

    def _call(self, method: str, *args: Any) -> Any:
        result = getattr(self.client, method)(*args)
        if self.loop is not None:
            return self.loop.run_until_complete(result)
        return result


def timing_info(data: list[float], rtt_ms: float | None) -> dict[str, float | None]:
    """p95/p99 (pytest-benchmark has neither) and the time in round trips."""
    mean = statistics.fmean(data)
    return {
        "p95_ms": round(percentile(data, 95) * 1000, 3),
        "p99_ms": round(percentile(data, 99) * 1000, 3),
        "rtts": round(mean * 1000 / rtt_ms, 2) if rtt_ms and rtt_ms >= 1 else None,
    }
