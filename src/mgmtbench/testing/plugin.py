"""mgmtbench's pytest plugin, registered through the ``pytest11`` entry point ``mgmtbench``.

Loaded in every pytest run where mgmtbench is installed; it only acts on tests that ask for its
fixtures (:mod:`mgmtbench.testing.fixtures`) or its matrix names (``profile``, ``client``,
``mode``, ``commands``, ``concurrency``: :mod:`mgmtbench.testing.options`), and it ends a run that
saved benchmarks with their side-by-side tables (:mod:`mgmtbench.testing.summary`).
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import Any

import pytest

from mgmtbench.errors import LabError
from mgmtbench.lab import watchdog
from mgmtbench.testing.edge import add_edge_options
from mgmtbench.testing.edge import edge_lab_for as edge_lab_for  # the edge proxy's lab fixture
from mgmtbench.testing.fixtures import (
    agent_key,
    asa,
    client_keys,
    emulator_for,
    endpoint,
    fleet_lab_for,
    fleet_site_for,
    fresh_emulator,
    ios,
    ios_target,
    lab,
    lab_for,
    login,
    site_for,
    ssh_agent,
    sshd_device,
    targets_for,
    user_keys,
)
from mgmtbench.testing.options import add_options, check, generate_matrix, skip_lab_only
from mgmtbench.testing.progress import add_progress_option, start_progress
from mgmtbench.testing.scaleout import add_dask_options, check_dask_options, generate_dask_matrix
from mgmtbench.testing.scaleout import dask_cluster as dask_cluster  # fleets on Dask workers
from mgmtbench.testing.summary import write_summary

__all__ = ["agent_key", "asa", "client_keys", "emulator_for", "endpoint", "fleet_lab_for",
           "fleet_site_for", "fresh_emulator", "ios", "ios_target", "lab", "lab_for", "login",
           "site_for", "ssh_agent", "sshd_device", "targets_for", "user_keys"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``mgmtbench`` option group (and the edge proxy's and the Dask fleet's)."""
    add_options(parser)
    add_edge_options(parser)
    add_dask_options(parser)
    add_progress_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Markers the plugin's users may put on their tests; the matrix options, checked."""
    config.addinivalue_line("markers", "openssh: needs the OpenSSH client or server binaries")
    config.addinivalue_line("markers", "inventory: a benchmark that also runs against the "
                                       "--inventory hosts (through site_for / fleet_site_for)")
    check(config)
    check_dask_options(config)


def pytest_sessionstart(session: pytest.Session) -> None:
    """N of M, elapsed, ETA on the terminal (:mod:`mgmtbench.testing.progress`), once pytest's
    terminal reporter is there."""
    start_progress(session.config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise tests that ask for the benchmark matrix (or the Dask fleet's)."""
    generate_matrix(metafunc)
    generate_dask_matrix(metafunc)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test begins: the lab watchdog starts a new list of the labs it uses, and embedded
    emulators' log rate limits start anew (a test sees its lines as if it ran alone)."""
    watchdog.begin()
    lograte = sys.modules.get("mgmtbench.emulator.lograte")  # loaded with an EmulatorThread
    if lograte is not None:
        lograte.reset()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """A test on a lab whose link or devices died fails with the lab's own word on it (the dead
    process, how it ended: :mod:`mgmtbench.lab.watchdog`), checked before and after its body,
    instead of passing on numbers of a dead link or failing on a client's time-out."""
    _check_labs()
    try:
        result = yield
    except Exception as exc:
        _check_labs(exc)
        raise
    _check_labs()
    return result


def _check_labs(cause: BaseException | None = None) -> None:
    """The watchdog's word as the test's failure: one line, no traceback."""
    try:
        watchdog.check_used()
    except LabError as dead:
        raise pytest.fail.Exception(str(dead), pytrace=False) from cause


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--inventory``, lab benchmarks not marked ``inventory`` are skipped."""
    skip_lab_only(config, items)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Side-by-side tables for the run's benchmarks."""
    write_summary(terminalreporter, config)
