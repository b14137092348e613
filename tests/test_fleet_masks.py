"""The fleet benchmark through an inventory checks each round against the first by digest: the
worker digests outputs with the platform's volatile lines masked (:mod:`mgmtbench.targets.stable`),
so a command whose counters run (``show interfaces``, the default ``--fleet-command``) compares
round to round, and a real change still fails."""

from __future__ import annotations

import asyncio
import hashlib
import time

import asyncssh

from mgmtbench.clients.asyncssh.connect import connect_options
from mgmtbench.clients.fleet.worker import FleetWorker
from mgmtbench.targets import Target
from mgmtbench.testing.sites import first_round_digests

COMMAND = "show interfaces"


def raw_outputs(target: Target, pause: float) -> list[str]:
    async def read() -> list[str]:
        async with asyncssh.connect(**connect_options(target, str(target.known_hosts))) as conn:
            first = str((await conn.run(COMMAND, timeout=10)).stdout)
            await asyncio.sleep(pause)
            return [first, str((await conn.run(COMMAND, timeout=10)).stdout)]

    return asyncio.run(read())


def test_rounds_agree_once_counters_are_masked(ios_target: Target) -> None:
    first, later = raw_outputs(ios_target, 1.2)
    # The device's counters run: whole outputs differ, so a digest of them could not compare.
    assert hashlib.sha256(first.encode()).digest() != hashlib.sha256(later.encode()).digest()
    with FleetWorker("asyncssh") as worker:
        reference = first_round_digests(worker.run([ios_target], COMMAND, ["?"]))
        time.sleep(1.2)
        again = worker.run([ios_target], COMMAND, reference)
        assert [s["error"] for s in again["sessions"]] == [None]
        # Another command's answer is still a wrong output: the masks hide counters only.
        other = worker.run([ios_target], "show ip interface brief", reference)
        assert [s["error"] for s in other["sessions"]] == ["wrong output"]
