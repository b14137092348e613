"""The ``netns`` runtime: one emulator process inside the lab's namespace serves every device,
each on its own address on the namespace's loopback."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mgmtbench.errors import UsageError
from mgmtbench.lab.runtimes.base import DeviceRuntime, RuntimeContext
from mgmtbench.lab.state import LabState


class NetnsRuntime(DeviceRuntime):
    name = "netns"
    devices_in_lab_namespace = True

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._state_dir: Path | None = None

    def start(self, context: RuntimeContext) -> None:
        creds = context.credentials
        self._state_dir = context.folder / "emulator"
        addresses = [d.address for d in context.devices]
        argv = [sys.executable, "-m", "mgmtbench.cli", "serve", "--bind", ",".join(addresses),
                "--ssh-port", str(context.ssh_port), "--https-port", str(context.https_port),
                "--platform", context.platform, "--username", creds.username,
                "--password", creds.password, "--enable-password", creds.enable_secret,
                "--state-dir", str(self._state_dir), "--hostname", context.hostname]
        if creds.authorized_keys is not None:
            argv += ["--authorized-keys", str(creds.authorized_keys)]
        self._process = start_in_netns(context.state, context.folder, "emulator", argv,
                                       "Press Ctrl-C")

    def stop(self) -> None:
        if self._process is not None:
            stop_processes([self._process])
            self._process = None

    def device_pids(self) -> list[int]:
        process = self._process
        return [process.pid] if process is not None and process.poll() is None else []

    @property
    def ca_file(self) -> Path:
        assert self._state_dir is not None, "the runtime is not started"
        return self._state_dir / "tls" / "ca.pem"

    @property
    def known_hosts(self) -> Path:
        assert self._state_dir is not None, "the runtime is not started"
        return self._state_dir / "known_hosts"

    def echo_address(self, context: RuntimeContext) -> str:
        # The devices' namespace is the lab's: the echo shares the first device's address.
        return context.devices[0].address


def start_in_netns(state: LabState, folder: Path, name: str, argv: list[str], ready: str,
                   timeout: float = 60) -> subprocess.Popen[bytes]:
    """Start ``argv`` inside the lab's namespace, record its pid in ``state``, and wait until its
    output contains ``ready`` (stdout to ``folder/NAME.out``, stderr to ``folder/NAME.log``)."""
    folder.mkdir(parents=True, exist_ok=True)
    out_path, err_path = folder / f"{name}.out", folder / f"{name}.log"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "mgmtbench.lab.nsexec", state.netns, *argv], stdout=out,
            stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
    state.pids.append(process.pid)
    state.save()
    deadline = time.monotonic() + timeout
    while ready not in out_path.read_text(errors="replace"):
        if process.poll() is not None:
            lines = err_path.read_text(errors="replace").strip().splitlines()
            raise UsageError(f"the lab's {name} did not start: "
                             f"{lines[-1] if lines else 'exit ' + str(process.returncode)}")
        if time.monotonic() > deadline:
            stop_processes([process])
            raise UsageError(f"the lab's {name} was not ready within {timeout:.0f} s "
                             f"(see {err_path})")
        time.sleep(0.05)
    return process


def stop_processes(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM, then SIGKILL what is still there after 10 s."""
    for process in reversed(processes):
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
