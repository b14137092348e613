"""Progress with an estimate of the time left (mgmtbench.progress): the estimate, the switch
between on, off and a terminal's own, the lines under the cursor, and a pytest run whose terminal
shows them while its saved results have none of it."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from mgmtbench import progress
from mgmtbench.errors import UsageError
from mgmtbench.progress import Board, Estimate, choice, enabled

# What the board writes: lines under the cursor, between a save and a restore of the cursor.
DRAWN = re.compile(r"(?:\x1bD)*(?:\x1bM)*\x1b7.*?\x1b8", re.S)
SGR = re.compile(r"\x1b\[[0-9;]*m")


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Boards on a StringIO take their width from COLUMNS: wide enough that no line is cut,
    whatever terminal the suite runs in (CI's is 80 columns)."""
    monkeypatch.setenv("COLUMNS", "200")


def lines(board: Board) -> list[str]:
    return [SGR.sub("", line) for line in board.render()]


# --- the estimate -----------------------------------------------------------------------------

def test_nothing_done_and_nothing_known_is_no_estimate() -> None:
    assert Estimate(["a", "b"]).remaining() is None


def test_each_kind_by_its_own_mean_else_the_mean_of_all() -> None:
    estimate = Estimate(["slow"] * 3 + ["fast"] * 3 + ["new"] * 2)
    estimate.done("slow", 10.0)
    estimate.done("fast", 1.0)
    estimate.done("fast", 3.0)
    assert estimate.per_item("slow") == 10.0
    assert estimate.per_item("fast") == 2.0
    assert estimate.per_item("new") == pytest.approx(14.0 / 3)  # the mean over every item done
    assert estimate.remaining() == pytest.approx(2 * 10.0 + 1 * 2.0 + 2 * 14.0 / 3)
    assert (estimate.completed, estimate.total) == (3, 8)


def test_an_earlier_run_answers_for_kinds_not_seen_yet() -> None:
    estimate = Estimate(["device"] * 10 + ["calibration"], prior={"device": 0.5,
                                                                   "calibration": 4.0})
    assert estimate.remaining() == 9.0
    estimate.done("device", 2.0, count=10)  # this run's devices are slower: it wins
    assert estimate.remaining() == 4.0
    assert estimate.means() == {"device": 0.2}


def test_wall_time_over_work_learns_how_many_run_at_once() -> None:
    estimate = Estimate(["t"] * 8)
    for _ in range(4):
        estimate.done("t", 10.0)  # 40 s of work in 10 s of wall time: 4 at once
    assert estimate.remaining(elapsed=10.0) == pytest.approx(10.0)
    assert estimate.remaining(elapsed=40.0) == pytest.approx(40.0)


def test_the_item_under_way_counts_only_what_is_left_of_it() -> None:
    estimate = Estimate(["vm"], prior={"vm": 600.0})
    assert estimate.remaining(running=200.0, running_kind="vm") == 400.0
    assert estimate.remaining(running=900.0, running_kind="vm") == 0.0  # late: never below 0


# --- on, off, or a terminal's own -------------------------------------------------------------

@pytest.fixture
def terminal() -> Iterator[io.TextIOWrapper]:
    """The far end of a real pseudo-terminal (isatty() is true)."""
    leader, follower = os.openpty()
    with open(follower, "w") as stream:
        yield stream
    os.close(leader)


def test_on_a_terminal_by_default_and_never_elsewhere(terminal: io.TextIOWrapper,
                                                      tmp_path: Path) -> None:
    env = {"TERM": "xterm"}
    assert enabled(terminal, environ=env)
    assert not enabled(io.StringIO(), environ=env)
    with open(tmp_path / "log", "w") as file:
        assert not enabled(file, environ=env)
    assert not enabled(terminal, environ={"TERM": "dumb"})
    assert not enabled(None, "on", env)


def test_asked_off_or_on(terminal: io.TextIOWrapper) -> None:
    assert not enabled(terminal, environ={"MGMTBENCH_PROGRESS": "0"})
    assert not enabled(terminal, "off", {})
    assert enabled(io.StringIO(), environ={"MGMTBENCH_PROGRESS": "1"})
    # A command's own option wins over the environment; its "auto" leaves it to the variable.
    assert enabled(io.StringIO(), "on", {"MGMTBENCH_PROGRESS": "0"})
    assert choice("auto", {"MGMTBENCH_PROGRESS": "off"}) == "off"
    assert choice(None, {}) == "auto"


def test_a_wrong_value_says_what_to_use() -> None:
    with pytest.raises(UsageError, match=r"MGMTBENCH_PROGRESS='maybe'.*on \(1\), off \(0\)"):
        choice(None, {"MGMTBENCH_PROGRESS": "maybe"})


def test_without_a_board_tasks_do_nothing() -> None:
    assert progress.current() is None
    with progress.task("lab", ["a"]) as steps, progress.hidden():
        steps.begin("a")
        steps.step("a")
    with progress.board(io.StringIO(), "off") as shown:
        assert shown is None
        assert progress.current() is None


# --- the lines --------------------------------------------------------------------------------

def test_the_line_says_n_of_m_elapsed_and_eta() -> None:
    clock = Clock()
    board = Board(io.StringIO(), clock=clock, width=160)
    task = board.task("pytest", ["a"] * 3 + ["b"] * 2, noun="benchmarks")
    [line] = lines(board)
    assert "0 of 5 benchmarks" in line
    assert "ETA -:--:--" in line
    clock.now += 2
    task.step("a")
    clock.now += 4
    task.step("a", note="test_b[local]")
    [line] = lines(board)
    assert "2 of 5 benchmarks" in line
    assert "elapsed 0:00:06" in line
    # a: 3 s each (1 left), b: the mean of all (2 left), as much wall time as work.
    assert "ETA 0:00:09" in line
    assert "test_b[local]" in line


def test_drawn_under_the_cursor_at_most_every_interval() -> None:
    clock = Clock()
    out = io.StringIO()
    board = Board(out, clock=clock, width=120, interval=0.2)
    task = board.task("fleet", ["round"] * 4, noun="rounds")
    first = out.getvalue()
    assert first.startswith("\x1bD\x1bM\x1b7")  # room under the cursor, the cursor saved
    assert first.endswith("\x1b8")  # and restored
    task.step("round")  # no time has passed: not drawn again
    assert out.getvalue() == first
    clock.now += 0.2
    task.step("round")
    assert "2 of 4 rounds" in SGR.sub("", out.getvalue())


def test_hidden_while_others_write_then_drawn_again() -> None:
    out = io.StringIO()
    board = Board(out, clock=Clock(), width=120)
    board.task("lab", ["namespace", "link"])
    with board.hidden():
        cleared = out.getvalue()
        assert cleared.endswith("\x1b7\x1bD\r\x1b[2K\x1b8")  # the line under the cursor cleared
        out.write("pytest's own line\n")
    assert "0 of 2 steps" in SGR.sub("", out.getvalue().rpartition("pytest's own line\n")[2])
    board.close()
    assert out.getvalue().endswith("\x1b7\x1bD\r\x1b[2K\x1b8")
    size = len(out.getvalue())
    board.refresh(force=True)
    assert len(out.getvalue()) == size  # closed: nothing more


def failing(clock: Clock) -> None:
    with progress.task("lab", ["link"], remember_as="lab up tun") as steps:
        clock.now += 50
        steps.step("link")
        raise RuntimeError


def test_a_task_remembers_its_times_for_the_next_run(tmp_path: Path) -> None:
    cache = tmp_path / "progress.json"
    clock = Clock()
    with progress.board(io.StringIO(), "on", clock=clock, cache=cache) as shown:
        assert progress.current() is shown
        with progress.task("lab", ["link", "device", "device"], remember_as="lab up tun") as steps:
            clock.now += 3
            steps.step("link")
            clock.now += 1
            steps.step("device", count=2)
        with pytest.raises(RuntimeError):
            failing(clock)  # a failed bring-up is no estimate for the next one
    assert progress.current() is None
    assert progress.remembered("lab up tun", cache) == {"link": 3.0, "device": 0.5}
    assert json.loads(cache.read_text())["lab up tun"] == {"device": 0.5, "link": 3.0}
    assert progress.remembered("lab up netem", cache) == {}


def test_rounds_counts_in_the_benchmarks_setup() -> None:
    clock = Clock()
    out = io.StringIO()
    calls: list[int] = []
    with progress.board(out, "on", clock=clock, interval=0.0) as shown:
        assert shown is not None
        with progress.rounds("fleet asyncssh c10", 3, sessions=10,
                             setup=lambda: calls.append(1)) as counted:
            for _ in range(3):
                assert counted() is None  # pedantic's setup: no arguments
                clock.now += 2
            [line] = lines(shown)
            assert "2 of 3 rounds" in line
            assert "20 of 30 sessions" in line
            assert "ETA 0:00:00" in line  # 2 s into the last round of 2 s
    assert calls == [1, 1, 1]


# --- a pytest run -----------------------------------------------------------------------------

TINY = """
import pytest

@pytest.mark.parametrize("n", [1, 2])
def test_tiny(benchmark, n):
    benchmark.pedantic(sum, args=(range(n),), rounds=3)
"""


@pytest.fixture
def _not_an_xdist_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest run inside is its own (pytest-benchmark saves nothing on a worker)."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("_not_an_xdist_worker")
def test_a_pytest_run_shows_progress_on_its_terminal_only(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_tiny=TINY)
    runs = {}
    for setting in ("1", "0"):
        monkeypatch.setenv("MGMTBENCH_PROGRESS", setting)
        out = pytester.path / f"out{setting}.json"
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q",
                                               f"--benchmark-json={out}")
        result.assert_outcomes(passed=2)
        runs[setting] = (result.stdout.str(), out.read_text())
    shown, saved = runs["1"]
    plain = SGR.sub("", shown)
    assert "0 of 2 benchmarks" in plain
    assert "ETA" in plain
    assert "\x1b" not in saved
    assert "ETA" not in saved
    assert "benchmarks elapsed" not in saved
    assert json.loads(saved)["benchmarks"]
    quiet, _ = runs["0"]
    assert "\x1b7" not in quiet
    # pytest's own -q output is as it was: the dots line is the same once the lines are out.
    dots = [line for line in DRAWN.sub("", shown).splitlines() if line.startswith("..")]
    assert dots == [line for line in quiet.splitlines() if line.startswith("..")]
    assert dots[0].endswith("[100%]")
