"""The ``netns`` runtime: emulator processes inside the lab's namespace serve every device, each
on its own address on the namespace's loopback.

One process by default. ``processes=P`` shares the fleet among P emulator processes (contiguous
shards of the devices, each process with its hostnames given explicitly), so a fleet can use more
than one core of the lab's machine; each process has its own CA and host key, and the lab's CA
file and known_hosts hold them all.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mgmtbench.emulator.options import env_name
from mgmtbench.errors import UsageError
from mgmtbench.lab.facts import RuntimeFacts
from mgmtbench.lab.netns import START_TIMEOUT
from mgmtbench.lab.processes import retire, spawn
from mgmtbench.lab.runtimes.base import DeviceRuntime, DeviceSpec, RuntimeContext, RuntimeOptions
from mgmtbench.lab.state import LabState
from mgmtbench.privatefiles import open_private, private_folder


class NetnsRuntime(DeviceRuntime):
    """Emulator processes in the lab's namespace serve every device on its loopback."""
    name = "netns"
    devices_in_lab_namespace = True

    def __init__(self, processes: int = 1) -> None:
        self.processes = processes
        self._started: list[subprocess.Popen[bytes]] = []
        self._folders: list[Path] = []
        self._folder: Path | None = None

    @classmethod
    def from_options(cls, options: RuntimeOptions) -> NetnsRuntime:
        """The runtime with ``options.processes`` emulator processes."""
        if options.processes < 1:
            raise UsageError(f"emulator processes: at least 1, not {options.processes}")
        return cls(options.processes)

    def start(self, context: RuntimeContext) -> None:
        """Start the emulator processes, one shard of the devices each."""
        self._folder = context.folder
        shards = _shards(list(context.devices), self.processes)
        for index, shard in enumerate(shards):
            name = "emulator" if len(shards) == 1 else f"emulator-{index + 1}"
            folder = context.folder / name
            self._folders.append(folder)
            self._started.append(start_in_netns(context.state, context.folder, name,
                                                _serve_argv(context, shard, folder),
                                                "Press Ctrl-C", env=_serve_env(context)))
        if len(shards) > 1:
            self.ca_file.write_bytes(b"".join((f / "tls" / "ca.pem").read_bytes()
                                              for f in self._folders))
            self.known_hosts.write_bytes(b"".join((f / "known_hosts").read_bytes()
                                                  for f in self._folders))

    def stop(self) -> None:
        """Stop the emulator processes."""
        stop_processes(self._started)
        self._started = []

    def device_pids(self) -> list[int]:
        """The emulator processes that still run."""
        return [p.pid for p in self._started if p.poll() is None]

    @property
    def ca_file(self) -> Path:
        """The CA file (every process's CA together when there are several)."""
        assert self._folder is not None, "the runtime is not started"
        if len(self._folders) == 1:
            return self._folders[0] / "tls" / "ca.pem"
        return self._folder / "ca-bundle.pem"

    @property
    def known_hosts(self) -> Path:
        """The known_hosts file (every process's host key when there are several)."""
        assert self._folder is not None, "the runtime is not started"
        if len(self._folders) == 1:
            return self._folders[0] / "known_hosts"
        return self._folder / "known_hosts"

    def echo_address(self, context: RuntimeContext) -> str:
        """The first device's address: the devices live in the lab's namespace."""
        # The devices' namespace is the lab's: the echo shares the first device's address.
        return context.devices[0].address

    def facts(self) -> RuntimeFacts:
        """The runtime and its number of emulator processes."""
        return RuntimeFacts(self.name, emulator_processes=len(self._started) or self.processes)


def _shards(devices: list[DeviceSpec], count: int) -> list[list[DeviceSpec]]:
    """``devices`` in ``count`` contiguous, nearly equal parts (no empty part)."""
    count = min(count, len(devices))
    size, extra = divmod(len(devices), count)
    shards, first = [], 0
    for index in range(count):
        last = first + size + (1 if index < extra else 0)
        shards.append(devices[first:last])
        first = last
    return shards


def _serve_argv(context: RuntimeContext, devices: list[DeviceSpec], folder: Path) -> list[str]:
    creds = context.credentials
    argv = [sys.executable, "-m", "mgmtbench.cli", "serve",
            "--bind", ",".join(d.address for d in devices),
            "--hostname", context.hostname, "--hostnames", ",".join(d.hostname for d in devices),
            "--ssh-port", str(context.ssh_port), "--https-port", str(context.https_port),
            "--netconf-port", str(context.netconf_port),
            "--gnmi-port", str(context.gnmi_port),
            *(["--http3-port", str(context.http3_port)] if context.http3_port else ["--no-http3"]),
            "--platform", context.platform, "--username", creds.username,
            "--state-dir", str(folder)]
    if creds.authorized_keys is not None:
        argv += ["--authorized-keys", str(creds.authorized_keys)]
    for flag, value in context.ssh.flags().items():
        argv += [flag, value]
    return argv


def _serve_env(context: RuntimeContext) -> dict[str, str]:
    """The passwords, for ``mgmtbench serve`` to read from its environment: never in its
    arguments, which every user of the machine can read (``ps``)."""
    creds = context.credentials
    return {env_name("--password"): creds.password,
            env_name("--enable-password"): creds.enable_secret}


def start_in_netns(state: LabState, folder: Path, name: str, argv: list[str], ready: str,
                   timeout: float = START_TIMEOUT,
                   env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` inside the lab's namespace, recorded in ``state`` as it starts
    (:func:`~mgmtbench.lab.processes.spawn`), and wait until its output contains ``ready``
    (stdout to ``folder/NAME.out``, stderr to ``folder/NAME.log``, both 0600: they may show
    credentials). ``env``: variables to add to its environment (secrets go there)."""
    private_folder(folder)
    out_path, err_path = folder / f"{name}.out", folder / f"{name}.log"
    with open_private(out_path) as out, open_private(err_path) as err:
        process: subprocess.Popen[bytes] = spawn(
            state.lab_id, name, [sys.executable, "-m", "mgmtbench.lab.nsexec", state.netns, *argv],
            log=err_path, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
            start_new_session=True)
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
    """SIGTERM, then SIGKILL what is still there after 10 s (their end is no death to report:
    :func:`~mgmtbench.lab.processes.retire`)."""
    for process in processes:
        retire(process.pid)
    for process in reversed(processes):
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
