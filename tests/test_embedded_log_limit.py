"""The log rate limit of ``mgmtbench serve`` holds for an emulator embedded in a test process
(``EmulatorThread``, issue 17): a flood of one event from the emulator is a few lines and a count,
while the process's logging is as its owner set it (no handler changed, other threads' records
untouched) and each test starts with fresh windows (the plugin resets them)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from mgmtbench.emulator import EmulatorThread, Limits
from mgmtbench.emulator.guard import RateLimitFilter
from mgmtbench.emulator.lograte import LOGGERS, reset
from mgmtbench.testing.shell import https_client

GUESSES = 25
BURST = RateLimitFilter().burst  # what `serve` lets through per event and interval


def bad_credential_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records
            if r.name.startswith("mgmtbench.emulator") and "bad credentials" in r.getMessage()]


def guess(emu: EmulatorThread, times: int) -> None:
    endpoint = emu.endpoints[0]
    url = f"https://{endpoint.host}:{endpoint.https_port}/admin/exec/show+clock"
    with https_client(emu, auth=False) as client:
        for n in range(times):
            assert client.get(url, auth=("admin", f"wrong{n}")).status_code == 401


def test_a_flood_from_an_embedded_emulator_is_a_few_lines(
        fresh_emulator: Callable[..., EmulatorThread],
        caplog: pytest.LogCaptureFixture) -> None:
    handlers = {h: list(h.filters) for h in logging.getLogger().handlers}
    emu = fresh_emulator(ssh=False, limits=Limits(auth_failure_delay=0.0))
    with caplog.at_level(logging.WARNING, logger="mgmtbench"):
        guess(emu, GUESSES)
        flood = bad_credential_lines(caplog)
        assert len(flood) == BURST, [r.getMessage() for r in flood]  # not 25
        # The test's own records on the same logger, from its own thread: every one passes.
        mine = logging.getLogger("mgmtbench.emulator")
        for _ in range(GUESSES):
            mine.warning("%s: bad credentials (the test's own line)", "here")
        assert len(bad_credential_lines(caplog)) == BURST + GUESSES
        # A new test (the plugin resets the windows before each): lines pass again.
        reset()
        guess(emu, 1)
    assert len(bad_credential_lines(caplog)) == BURST + GUESSES + 1
    # The process's logging is untouched: the root's handlers have the filters they had.
    assert {h: list(h.filters) for h in logging.getLogger().handlers} == handlers
    assert all(any(type(f).__name__ == "EmbeddedRateLimit" for f in logging.getLogger(n).filters)
               for n in LOGGERS)
