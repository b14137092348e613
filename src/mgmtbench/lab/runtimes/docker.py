"""The ``docker`` runtime: one container per device, wired into the lab's namespace.

Each device runs the emulator image (``docker/Dockerfile``) with ``--network none``; the lab then
finds the container's network namespace (its main process's ``/proc/PID/ns/net``) and connects it
to the lab's namespace with a veth pair (:mod:`.wiring`): the container holds the device's address,
the lab's namespace routes to it. The impaired link is still the one between the benchmark and the
lab's namespace, so every link backend works unchanged.

Containers are named ``mgmtbench-<lab id>-<n>`` and labelled ``mgmtbench.lab=<lab id>``; their
names go into the lab's state before they start, so a later run removes them after a SIGKILL
(:func:`remove_containers`, :meth:`DockerRuntime.sweep`). Nothing else in Docker is touched.

Each device keeps its own CA and host key in its folder under the lab's (bind-mounted as the
emulator's ``--state-dir``); the lab's CA file and known_hosts are those of every device together.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mgmtbench.errors import DockerError, UsageError
from mgmtbench.lab.facts import RuntimeFacts
from mgmtbench.lab.netns import run_in
from mgmtbench.lab.procfs import netns_of, process_exists
from mgmtbench.lab.runtimes.base import DeviceRuntime, DeviceSpec, RuntimeContext, RuntimeOptions
from mgmtbench.lab.state import LabState

DEFAULT_IMAGE = "mgmtbench-device:latest"
LABEL = "mgmtbench.lab"
STATE_IN_CONTAINER = "/var/lib/mgmtbench"
KEYS_IN_CONTAINER = "/etc/mgmtbench/authorized_keys"
BUILD_HINT = "docker build -f docker/Dockerfile -t {image} .  (in the mgmtbench source tree)"


def docker(*args: str, timeout: float = 120) -> str:
    """Run ``docker ARGS`` and return its stdout; raise :class:`DockerError` with its last error
    line."""
    try:
        result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout,
                                stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise DockerError("the docker CLI is not installed (apt-get install docker.io, or Docker "
                          "Engine from docs.docker.com)") from None
    except subprocess.TimeoutExpired:
        raise DockerError(f"`docker {args[0]}` did not finish within {timeout:.0f} s") from None
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        raise DockerError(f"`docker {' '.join(args[:2])}` failed: "
                          f"{lines[-1] if lines else 'exit ' + str(result.returncode)}")
    return result.stdout


class DockerRuntime(DeviceRuntime):
    """One container per device, wired into the lab's namespace."""
    name = "docker"

    def __init__(self, image: str = DEFAULT_IMAGE, ready_timeout: float = 60) -> None:
        self.image = image
        self.ready_timeout = ready_timeout
        self._names: list[str] = []
        self._pids: list[int] = []
        self._folder: Path | None = None

    @classmethod
    def from_options(cls, options: RuntimeOptions) -> DockerRuntime:
        """The runtime for ``options.image``; refuses emulator processes."""
        if options.processes != 1:
            raise UsageError("emulator processes apply to the netns runtime: the docker runtime "
                             "runs one container per device")
        return cls(options.image or DEFAULT_IMAGE)

    @classmethod
    def unavailable(cls) -> str | None:
        """Why docker cannot run here (no CLI, no daemon), None if it can."""
        if shutil.which("docker") is None:
            return ("the docker CLI is not installed (apt-get install docker.io, or Docker Engine "
                    "from docs.docker.com)")
        try:
            docker("version", "--format", "{{.Server.Version}}", timeout=20)
        except DockerError as exc:
            return (f"the Docker daemon is not reachable ({exc}): start it (systemctl start "
                    "docker, or dockerd) or point DOCKER_HOST at it")
        return None

    # --- DeviceRuntime ----------------------------------------------------------------------

    def start(self, context: RuntimeContext) -> None:
        """Run and wire one container per device; return when all answer."""
        self._folder = context.folder
        try:
            docker("image", "inspect", "--format", "{{.Id}}", self.image, timeout=30)
        except DockerError:
            raise UsageError(f"the docker image {self.image} is missing: build it with "
                             f"`{BUILD_HINT.format(image=self.image)}`") from None
        names = [f"mgmtbench-{context.state.lab_id}-{i:03d}" for i in range(len(context.devices))]
        context.state.containers.extend(names)  # recorded before they exist: cleanup after a kill
        context.state.save()
        self._names = names
        folders = [context.folder / "devices" / name for name in names]
        with ThreadPoolExecutor(max_workers=min(8, len(names))) as pool:
            list(pool.map(lambda args: self._run(context, *args),
                          zip(names, context.devices, folders, strict=True)))
        pids = docker("inspect", "--format", "{{.State.Pid}}", *names).split()
        self._pids = [int(p) for p in pids]
        if 0 in self._pids:  # a container that has already exited has no process
            self._raise_if_exited()
        index = context.state.index
        run_in(context.netns, "mgmtbench.lab.runtimes.wiring", {
            "lab_ip": context.lab_ip, "tcp": context.tcp,
            "devices": [{"pid": pid, "lab_if": f"mgb{index}c{i}", "address": d.address}
                        for i, (pid, d) in enumerate(zip(self._pids, context.devices, strict=True))],
        })
        self._wait_ready(folders)
        self.ca_file.write_bytes(b"".join((f / "tls" / "ca.pem").read_bytes() for f in folders))
        self.known_hosts.write_bytes(b"".join((f / "known_hosts").read_bytes() for f in folders))

    def tcp_end(self, context: RuntimeContext, echo_port: int) -> tuple[str, int, Path]:
        """The first device's SSH server, in its container's network namespace."""
        return context.devices[0].address, context.ssh_port, netns_of(self._pids[0])

    def stop(self) -> None:
        """Remove the lab's containers."""
        if self._names:
            remove_containers(self._names)
            self._names = []
            self._pids = []

    def device_pids(self) -> list[int]:
        """The containers' main processes that still run."""
        return [pid for pid in self._pids if process_exists(pid)]

    def failure(self) -> str | None:
        """A device container whose main process is gone."""
        for name, pid in zip(self._names, self._pids, strict=False):
            if not process_exists(pid):
                return f"device container {name} (pid {pid}) exited (see `docker logs {name}`)"
        return None

    @property
    def ca_file(self) -> Path:
        """Every device's CA certificate in one PEM file."""
        assert self._folder is not None, "the runtime is not started"
        return self._folder / "ca-bundle.pem"

    @property
    def known_hosts(self) -> Path:
        """Every device's host key in one known_hosts file."""
        assert self._folder is not None, "the runtime is not started"
        return self._folder / "known_hosts"

    def facts(self) -> RuntimeFacts:
        """The runtime and its image."""
        return RuntimeFacts(self.name, image=self.image)

    @classmethod
    def sweep(cls, dead: Sequence[LabState], live: set[str], everything: bool = False) -> list[str]:
        """The dead labs' recorded containers, then any labelled container of a lab not in
        ``live`` (one that died while starting); silent when no daemon is reachable."""
        remove_containers([name for state in dead for name in state.containers])
        return [f"container {name}" for name in sweep_labelled(live, everything)]

    # --- internals --------------------------------------------------------------------------

    def _run(self, context: RuntimeContext, name: str, device: DeviceSpec, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        creds = context.credentials
        env = {
            "MGMTBENCH_HOSTNAME": device.hostname, "MGMTBENCH_PLATFORM": context.platform,
            "MGMTBENCH_USERNAME": creds.username, "MGMTBENCH_PASSWORD": creds.password,
            "MGMTBENCH_ENABLE_PASSWORD": creds.enable_secret, "MGMTBENCH_BIND": device.address,
            "MGMTBENCH_SSH_PORT": str(context.ssh_port),
            "MGMTBENCH_HTTPS_PORT": str(context.https_port),
            "MGMTBENCH_NETCONF_PORT": str(context.netconf_port),
            "MGMTBENCH_GNMI_PORT": str(context.gnmi_port),
            # The image serves HTTP/3 unless told not to (a flag: no environment twin).
            **({"MGMTBENCH_HTTP3_PORT": str(context.http3_port)} if context.http3_port else {}),
            "MGMTBENCH_STATE_DIR": STATE_IN_CONTAINER,
            **context.ssh.environment(),  # algorithms, host key and login methods
        }
        mounts = ["-v", f"{folder}:{STATE_IN_CONTAINER}"]
        if creds.authorized_keys is not None:
            env["MGMTBENCH_AUTHORIZED_KEYS"] = KEYS_IN_CONTAINER
            mounts += ["-v", f"{Path(creds.authorized_keys).resolve()}:{KEYS_IN_CONTAINER}:ro"]
        env_file = folder.parent / f"{name}.env"  # credentials stay out of the process list
        env_file.touch(mode=0o600)
        env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        docker("run", "--detach", "--name", name, "--label", f"{LABEL}={context.state.lab_id}",
               "--network", "none",
               # The device binds its address before the lab has wired the container up.
               "--sysctl", "net.ipv4.ip_nonlocal_bind=1",
               "--cap-drop", "ALL", "--cap-add", "NET_BIND_SERVICE",
               "--env-file", str(env_file), *mounts, self.image)

    def _wait_ready(self, folders: list[Path]) -> None:
        """A device is ready once it has written its known_hosts (after binding its ports)."""
        deadline = time.monotonic() + self.ready_timeout
        last_check = time.monotonic()
        while not all((f / "known_hosts").exists() for f in folders):
            if time.monotonic() - last_check > 1:
                last_check = time.monotonic()
                self._raise_if_exited()
            if time.monotonic() > deadline:
                raise UsageError(f"the lab's device containers were not ready within "
                                 f"{self.ready_timeout:.0f} s (see `docker logs {self._names[0]}`)")
            time.sleep(0.05)

    def _raise_if_exited(self) -> None:
        states = docker("inspect", "--format", "{{.Name}} {{.State.Running}}", *self._names)
        for line in states.splitlines():
            name, running = line.strip().lstrip("/").split()
            if running != "true":
                logs = subprocess.run(["docker", "logs", "--tail", "5", name], capture_output=True,
                                      text=True, timeout=30)
                lines = (logs.stdout + logs.stderr).strip().splitlines()
                raise UsageError(f"the device container {name} exited: "
                                 f"{lines[-1] if lines else 'no output'}")


def remove_containers(names: list[str]) -> None:
    """Force-remove containers by name (those already gone are fine)."""
    if not names or shutil.which("docker") is None:
        return
    result = subprocess.run(["docker", "rm", "--force", "--volumes", *names], capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    missing = [line for line in result.stderr.splitlines() if "No such container" not in line]
    if result.returncode != 0 and missing:
        raise DockerError(f"could not remove containers {', '.join(names)}: {missing[-1]}")


def daemon_reachable() -> bool:
    """A cheap check before sweeping: a docker CLI and a daemon socket that exists."""
    if shutil.which("docker") is None:
        return False
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if host.startswith("unix://"):
        return Path(host.removeprefix("unix://")).is_socket()
    return True


def sweep_labelled(live_labs: set[str], everything: bool = False) -> list[str]:
    """Remove containers labelled by mgmtbench whose lab is not running (all with
    ``everything``); return their names. Silent when no daemon is reachable."""
    if not daemon_reachable():
        return []
    try:
        listing = docker("ps", "--all", "--filter", f"label={LABEL}", "--format",
                         f'{{{{.Names}}}} {{{{.Label "{LABEL}"}}}}', timeout=30)
    except DockerError:
        return []
    stale = []
    for line in listing.splitlines():
        with contextlib.suppress(ValueError):
            name, lab_id = line.split()
            if everything or lab_id not in live_labs:
                stale.append(name)
    remove_containers(stale)
    return stale
