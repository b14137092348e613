"""The fixtures, options and tables come from mgmtbench's own pytest plugin
(``mgmtbench.testing``, entry point ``pytest11: mgmtbench``), as they would in a user's repository.
``pytester`` runs the README's example benchmark in a fresh directory (tests/test_plugin.py).

The test suite runs in two passes (``nox -s tests``): what may share the machine with other tests
in parallel (pytest-xdist workers: most tests wait on sockets, a run of three modules used 28 %
of one core), then the modules marked ``serial`` here, alone: they build labs (namespaces, links,
processes that a lab's cleanup checks must find alone), or hold time, CPU or memory to bounds that
a neighbour's load would break.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

#: Test modules that run in the serial pass (``-m serial``), by file name.
SERIAL_MODULES = frozenset({
    # Labs: namespaces, links, wire taps, device runtimes, cleanup of what a lab left.
    "test_agent.py", "test_cli.py", "test_docker_runtime.py", "test_edge_docker.py",
    "test_emulated_vs_real.py", "test_fleet.py", "test_fleet_dask.py", "test_inventory.py",
    "test_inventory_check.py",
    "test_inventory_lab.py", "test_lab.py", "test_lab_cleanup.py", "test_lab_failures.py",
    "test_lab_interrupts.py", "test_lab_tcp.py", "test_lab_udp.py", "test_lab_watchdog.py",
    "test_proxy_lab.py",
    "test_report_inputs.py", "test_results.py", "test_secrets_and_bind.py",
    "test_ssh_options.py", "test_sshd_runtime.py", "test_tbf_link.py", "test_wiretap.py",
    "test_wiretap_quic.py",
    # Bounds on time, CPU, memory or descriptors.
    "test_filters_loop.py", "test_hostile_files.py", "test_http3_clients.py",
    "test_h2_floods.py", "test_https_accept.py", "test_limits.py",
    "test_limits_process.py",
    "test_config_linear.py", "test_descriptors.py",
    "test_memtrim.py",
    "test_ssh_memory.py",
    "test_probe_echo.py", "test_proxy.py", "test_proxy_limits.py", "test_server_throughput.py",
    "test_ssh_algorithms.py",
})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "serial: runs in the suite's serial pass (a lab, or bounds a neighbour's load "
        "would break); conftest.SERIAL_MODULES lists the modules")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).name in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)
