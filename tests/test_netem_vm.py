"""The pure parts of tools/netem_vm.py (finding a stock kernel, what is missing, the guest's script)
and tools/compare_backends.py (the side-by-side checks). The VM itself runs in ``nox -s netem``."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


netem_vm = load("netem_vm")
compare = load("compare_backends")


def test_stock_kernels_are_those_with_sch_netem_newest_last(tmp_path: Path) -> None:
    boot, modules = tmp_path / "boot", tmp_path / "modules"
    boot.mkdir()
    for version, netem in (("6.1.0-9-amd64", True), ("6.1.0-56-amd64", True),
                           ("6.18.44-custom", False)):
        (boot / f"vmlinuz-{version}").write_bytes(b"")
        sched = modules / version / "kernel/net/sched"
        sched.mkdir(parents=True)
        if netem:
            (sched / "sch_netem.ko.xz").write_bytes(b"")
    found = netem_vm.stock_kernels(boot, modules)
    assert [k.version for k in found] == ["6.1.0-9-amd64", "6.1.0-56-amd64"]
    assert found[-1].image == boot / "vmlinuz-6.1.0-56-amd64"


def test_missing_says_what_in_one_line() -> None:
    kernel = netem_vm.Kernel(netem_vm.version_key("6.1.0-56-amd64"), "6.1.0-56-amd64",
                             Path("/boot/vmlinuz-6.1.0-56-amd64"))
    assert netem_vm.missing([kernel], "/usr/bin/vng", "/usr/bin/qemu", True) is None
    why = netem_vm.missing([kernel], "/usr/bin/vng", None, True)
    assert why is not None
    assert "\n" not in why
    assert "qemu-system-x86" in why
    assert "--install" in why
    why = netem_vm.missing([], None, "/q", False)
    assert why is not None
    for part in ("linux-image-amd64", "busybox-static", netem_vm.VIRTME_NG):
        assert part in why


def test_guest_script_prepares_the_lab_then_runs_the_command_in_place() -> None:
    script = netem_vm.guest_script(
        ["pytest", "-k", "a and b"], Path("/work/x y"),
        {"PATH": "/venv/bin:/usr/bin", "SSH_AUTH_SOCK": "/tmp/agent", "VIRTUAL_ENV": "/venv",
         "BASH_FUNC_x%%": "()"},
        Path("/tmp/run/status"), [Path("/usr"), Path("/venv")])
    for module in ("sch_netem", "veth", "tun"):
        assert module in script
    assert "netem delay" in script
    assert "echo 1 > /proc/sys/net/ipv4/ip_forward" in script
    assert "/dev/net/tun" in script
    assert "mount --bind /run/netem-vm-root/venv /venv" in script
    assert "cd '/work/x y'" in script
    assert "export PATH=/venv/bin:/usr/bin" in script
    assert "export VIRTUAL_ENV=/venv" in script
    assert "SSH_AUTH_SOCK" not in script
    assert "BASH_FUNC" not in script
    lines = script.splitlines()
    assert lines[-2] == "pytest -k 'a and b'"
    assert lines[-1] == "echo $? > /tmp/run/status"


def test_guest_script_is_valid_sh() -> None:
    script = netem_vm.guest_script(["true"], Path("/"), {"PATH": "/usr/bin"}, Path("/tmp/s"),
                                   [Path("/usr")])
    subprocess.run(["sh", "-n", "-c", script], check=True)


def row(name: str, packets: float, mean_ms: float, rtts: float,
        wire: float | None = None) -> dict[str, float | None]:
    return {"packets_per_iteration": packets, "mean_ms": mean_ms, "rtts": rtts,
            "wire_rtts_per_iteration": wire}


@pytest.mark.parametrize(("timing", "b", "failures"), [
    (False, row("x", 20.4, 200.0, 6.0, 3.0), 0),
    (False, row("x", 25.0, 100.0, 3.0, 3.5), 0),  # packets are not held; wire 0.5 apart is
    (False, row("x", 20.0, 100.0, 6.0, 3.6), 1),  # wire round trips 0.6 apart
    (False, row("x", 20.0, 100.0, 6.0, None), 1),  # no wire count: nothing to compare
    (True, row("x", 20.0, 104.0, 6.3, 3.0), 0),  # within 5 %
    (True, row("x", 20.0, 110.0, 6.7, 3.0), 2),  # time 9.5 % and time in RTTs 11 % apart
])
def test_compare_holds_wire_round_trips_and_optionally_time(timing: bool, b: dict[str, float],
                                                            failures: int) -> None:
    a = row("x", 20.0, 100.0, 6.0, 3.0)
    rows = compare.pair({"t[x]": a}, {"t[x]": b, "t[only-b]": a})
    assert [r.name for r in rows] == ["t[x]"]
    assert len(compare.check_rows(rows, timing=timing)) == failures


def test_compare_holds_packets_only_when_asked() -> None:
    rows = compare.pair({"t[x]": row("x", 20.0, 100.0, 6.0, 3.0)},
                        {"t[x]": row("x", 20.6, 100.0, 6.0, 3.0)})
    assert compare.check_rows(rows, timing=False) == []
    assert len(compare.check_rows(rows, timing=False, packet_tolerance=0.5)) == 1
    assert compare.check_rows(rows, timing=False, packet_tolerance=1.0) == []
    assert compare.check_rows([], timing=False) == ["no benchmark ran through both backends"]


def test_compare_prints_the_timing_spread() -> None:
    rows = compare.pair({"t[a]": row("a", 1, 100.0, 10.0, 1), "t[b]": row("b", 1, 100.0, 4.0, 1)},
                        {"t[a]": row("a", 1, 100.0, 10.2, 1), "t[b]": row("b", 1, 100.0, 5.0, 1)})
    spread = compare.timing_spread(rows)
    assert "largest 22.2% (t[b])" in spread
    assert "1 of 2 within 5%" in spread


def test_compare_lab_check_rtts() -> None:
    good = {"configured_rtt_ms": 30, "link_rtt_ms": 30.2, "measured_rtt_ms": 31.4}
    assert compare.check_lab("netem", good, 0.05) == []
    early = {**good, "link_rtt_ms": 29.0}
    assert len(compare.check_lab("netem", early, 0.05)) == 1
    assert len(compare.check_lab("netem", {**good, "measured_rtt_ms": 40.0}, 0.05)) == 1
    assert compare.check_lab("netem", {**good, "measured_rtt_ms": 40.0}, 0.5) == []


def test_the_guest_output_is_copied_through_a_pipe() -> None:
    """qemu opens its stdout by path with O_TRUNC: netem_vm gives it a pipe and copies that."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"netem_vm (guest): ready\nrest")
    os.close(write_end)
    sink = io.BytesIO()
    with os.fdopen(read_end, "rb") as source:
        netem_vm.copy_stream(source, sink)
    assert sink.getvalue() == b"netem_vm (guest): ready\nrest"


def test_vng_command_passes_qemu_options_as_one_argument() -> None:
    kernel = netem_vm.Kernel(netem_vm.version_key("6.1.0-56-amd64"), "6.1.0-56-amd64",
                             Path("/boot/vmlinuz-6.1.0-56-amd64"))
    argv = netem_vm.vng_command("vng", kernel, Path("/r/g.sh"), Path("/w"), Path("/r"), 2, "4G",
                                "-cpu Nehalem")
    assert "--disable-kvm" in argv
    assert "--qemu-opts=-cpu Nehalem" in argv
    assert not any(a.startswith("--qemu-opts") for a in netem_vm.vng_command(
        "vng", kernel, Path("/r/g.sh"), Path("/w"), Path("/r"), 2, "4G"))


def test_compare_does_not_hold_wire_counts_of_concurrent_modes() -> None:
    a = {**row("x", 90.0, 300.0, 9.0, 6.9), "mode": "pipelined"}
    b = {**row("x", 94.0, 260.0, 8.0, 8.5), "mode": "pipelined"}
    rows = compare.pair({"t[x]": a}, {"t[x]": b})
    assert compare.check_rows(rows, timing=False) == []
    assert "t[x]*" in compare.table(rows, ("netem", "tun"))
    sequential = compare.pair({"t[x]": {**a, "mode": "pty-fresh"}},
                              {"t[x]": {**b, "mode": "pty-fresh"}})
    assert len(compare.check_rows(sequential, timing=False)) == 1


def test_compare_allows_a_mode_its_own_wire_tolerance() -> None:
    rows = compare.pair({"t[x]": {**row("x", 68.0, 500.0, 15.0, 10.2), "mode": "batch-exec"}},
                        {"t[x]": {**row("x", 77.0, 700.0, 20.0, 10.8), "mode": "batch-exec"}})
    assert len(compare.check_rows(rows, timing=False)) == 1
    assert compare.check_rows(rows, timing=False, allow={"batch-exec": 1.0}) == []
    assert len(compare.check_rows(rows, timing=False, allow={"pty-fresh": 1.0})) == 1


def test_the_guest_output_is_written_with_the_progress_lines_off() -> None:
    """Each chunk of the guest's output is written inside ``around()`` (mgmtbench.progress's
    board hidden meanwhile)."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"booted\n")
    os.close(write_end)
    sink, events = io.BytesIO(), []

    @contextlib.contextmanager
    def around() -> Iterator[None]:
        events.append(("off", sink.getvalue()))
        yield
        events.append(("on", sink.getvalue()))

    with os.fdopen(read_end, "rb") as source:
        netem_vm.copy_stream(source, sink, around)
    assert events == [("off", b""), ("on", b"booted\n")]


def test_wait_gives_the_exit_code_or_none_after_the_timeout() -> None:
    """The VM is waited for in steps, so the progress line's elapsed time moves meanwhile."""
    with subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"]) as done:
        assert netem_vm.wait(done, None, lambda: None) == 3
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as slow:
        try:
            assert netem_vm.wait(slow, 0.2, lambda: None) is None
        finally:
            slow.kill()
