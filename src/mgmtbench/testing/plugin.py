"""mgmtbench's pytest plugin, registered through the ``pytest11`` entry point ``mgmtbench``.

Loaded in every pytest run where mgmtbench is installed; it only acts on tests that ask for its
fixtures (:mod:`mgmtbench.testing.fixtures`) or its matrix names (``profile``, ``client``,
``mode``, ``commands``, ``concurrency``: :mod:`mgmtbench.testing.options`), and it ends a run that
saved benchmarks with their side-by-side tables (:mod:`mgmtbench.testing.summary`).
"""

from __future__ import annotations

from typing import Any

import pytest

from mgmtbench.testing.fixtures import (
    agent_key,
    asa,
    client_keys,
    emulator_for,
    endpoint,
    fleet_lab_for,
    fresh_emulator,
    ios,
    ios_target,
    lab,
    lab_for,
    login,
    ssh_agent,
    sshd_device,
    targets_for,
    user_keys,
)
from mgmtbench.testing.options import add_options, check, generate_matrix
from mgmtbench.testing.summary import write_summary

__all__ = ["agent_key", "asa", "client_keys", "emulator_for", "endpoint", "fleet_lab_for",
           "fresh_emulator", "ios", "ios_target", "lab", "lab_for", "login", "ssh_agent",
           "sshd_device", "targets_for", "user_keys"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``mgmtbench`` option group."""
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Markers the plugin's users may put on their tests; the matrix options, checked."""
    config.addinivalue_line("markers", "openssh: needs the OpenSSH client or server binaries")
    check(config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise tests that ask for the benchmark matrix."""
    generate_matrix(metafunc)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Side-by-side tables for the run's benchmarks."""
    write_summary(terminalreporter, config)
