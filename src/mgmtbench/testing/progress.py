"""The matrix's progress on the terminal: ``N of M benchmarks, elapsed, ETA`` under pytest's own
output (:mod:`mgmtbench.progress`), which stays as it is.

The lines go to the terminal pytest reports on, through a descriptor of their own (so a lab's
steps drawn during a fixture's set-up reach the terminal, not the test's captured output), and
are drawn only between pytest's phases of a test, or by tasks that run outside timed parts (a
lab coming up, a fleet's next round): never while a benchmark is timed. The estimate learns from
the tests done: each test function's mean time so far, else the mean over all. With xdist only
the controller shows it (the workers' reports come to it).

Off unless the terminal is one (``--progress off`` or ``MGMTBENCH_PROGRESS=0`` turn it off,
``on``/``1`` force it, control sequences and all); never in the saved results.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Sequence
from typing import Any, TextIO

import pytest

from mgmtbench.errors import UsageError
from mgmtbench.progress import CHOICES, Board, Task, activated, enabled


def add_progress_option(parser: pytest.Parser) -> None:
    """``--progress auto|on|off``."""
    group = parser.getgroup("mgmtbench", "mgmtbench lab and benchmark matrix")
    group.addoption("--progress", dest="mgmtbench_progress", choices=CHOICES, default="auto",
                    help="progress with an estimate of the time left, under pytest's output: "
                         "auto (on a terminal, unless MGMTBENCH_PROGRESS=0; default), on, off")


def start_progress(config: pytest.Config) -> None:
    """Register the progress plugin if the run shows progress (never on an xdist worker)."""
    if hasattr(config, "workerinput"):
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    file: TextIO = reporter._tw._file
    try:
        shown = enabled(file, config.getoption("mgmtbench_progress"))
    except UsageError as wrong:  # MGMTBENCH_PROGRESS=maybe
        raise pytest.UsageError(str(wrong)) from None
    if not shown:
        return
    config.pluginmanager.register(MatrixProgress(file), "mgmtbench-progress")


def _own_stream(file: TextIO, closing: contextlib.ExitStack) -> TextIO:
    """The terminal through a descriptor of its own, closed by ``closing``: pytest's capture of
    fd 1 and 2 during a test does not take it (a stream without a descriptor is used as is)."""
    try:
        fd = os.dup(file.fileno())
    except (OSError, ValueError, AttributeError):
        return file
    return closing.enter_context(open(fd, "w", errors="replace",
                                      encoding=getattr(file, "encoding", None) or "utf-8"))


def kind(nodeid: str) -> str:
    """The kind of a test for the estimate: its function (the node id without parameters)."""
    return nodeid.split("[", 1)[0]


class MatrixProgress:
    """The plugin object: one line for the run's tests, more while a lab or a fleet reports."""

    def __init__(self, terminal: TextIO) -> None:
        self._closing = contextlib.ExitStack()
        self.board = Board(_own_stream(terminal, self._closing))
        self._closing.enter_context(activated(self.board))  # closed first: lines off
        self.task: Task | None = None
        self.pending: tuple[list[str], str] | None = None  # node ids and noun, until the start
        self.parallel = False  # xdist: several tests run at once, none "the" running one
        self.seconds: dict[str, float] = {}  # per node id: its phases' durations so far

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The items to run (none on an xdist controller: see below)."""
        if session.items:
            benches = all("benchmark" in getattr(i, "fixturenames", ()) for i in session.items)
            self.pending = ([i.nodeid for i in session.items],
                            "benchmarks" if benches else "tests")

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        """Under xdist: the first worker's collection (they all collect the same)."""
        if self.pending is None and self.task is None:
            self.pending, self.parallel = (list(ids), "tests"), True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self, nodeid: str,
                                location: tuple[str, int | None, str]) -> Generator[None]:
        """Lines off while pytest writes; a test begins."""
        with self.board.hidden():
            yield
            if self.task is None and self.pending is not None:
                ids, noun = self.pending
                self.task = self.board.task("pytest", [kind(i) for i in ids], noun=noun)
            if self.task is not None:
                self.task.begin(None if self.parallel else kind(nodeid),
                                note=nodeid.rpartition("::")[2])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None]:
        """Lines off while pytest writes; a phase's duration counts to its test."""
        with self.board.hidden():
            yield
            self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self, nodeid: str,
                                 location: tuple[str, int | None, str]) -> Generator[None]:
        """Lines off while pytest writes; a test is done."""
        with self.board.hidden():
            yield
            if self.task is not None:
                self.task.step(kind(nodeid), seconds=self.seconds.pop(nodeid, 0.0))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self) -> Generator[None]:
        """Off, and the descriptor closed, before anyone reports the session's end (pytest's
        summary; pytest-benchmark's, which writes before its own yield)."""
        self._closing.close()
        return (yield)

    def pytest_unconfigure(self) -> None:
        """The same, if the session did not finish (safe to do twice)."""
        self._closing.close()
