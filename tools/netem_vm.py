"""Run a command inside a VM that boots Debian's stock kernel, which has sch_netem.

    python tools/netem_vm.py [--install] [--timeout S] -- CMD...

Machines whose own kernel lacks ``sch_netem`` (the project's test machines) prove the netem link
backend this way. virtme-ng (``vng``) boots the installed stock kernel in qemu over this machine's
own root file system (read-only in the guest, with writable overlays on /tmp, /etc, /var...) and
runs CMD there as the same user, in the same working directory (shared read-write, so files CMD
writes there come back) and with the same environment (PATH, virtualenv: the Python that has
mgmtbench installed). Before CMD the guest gets what the lab needs: the sch_netem, veth and tun
modules (from the installed package's /lib/modules/<version>), /dev/net/tun, IP forwarding, and a
check that a netem qdisc can be added to a veth pair. The exit code is CMD's.

``--install`` installs what is missing first (root): Debian's qemu-system-x86, linux-image-amd64
(only adds files under /boot and /lib/modules; the host does not reboot into it), busybox-static
(virtme-ng's initramfs) and iproute2 (``ip`` and ``tc`` for the guest's checks), and virtme-ng
from PyPI, pinned with its dependencies, into this Python (a ``vng`` elsewhere on PATH is not
used then: its version is not known).

The guest runs under qemu's software emulation (TCG): KVM is not used, because on the project's
machines a KVM guest hangs before the kernel prints anything (no usable nested virtualisation).
Everything is several times slower there: compare instruments with each other inside one VM run,
never a VM figure with a host figure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mgmtbench import progress

APT_PACKAGES = ("qemu-system-x86", "linux-image-amd64", "busybox-static", "iproute2")
VIRTME_NG = "virtme-ng==1.42"
# virtme-ng's own dependencies and theirs, pinned too (those in constraints.txt at the same
# versions), so that a release of any of them cannot change the VM unnoticed.
VIRTME_NG_DEPENDENCIES = ("argcomplete==3.7.2", "requests==2.34.2", "urllib3==2.7.0",
                          "charset-normalizer==3.4.7", "idna==3.20", "certifi==2026.10.18")
QEMU = "qemu-system-x86_64"
BUSYBOX_STATIC = Path("/bin/busybox")  # busybox-static's file (busybox, dynamic, is not enough)
NETEM_MODULE = "kernel/net/sched/sch_netem.ko"  # + .xz/.zst when compressed
GUEST_MODULES = ("sch_netem", "veth", "tun")
GUEST_SYSCTLS = ("net/ipv4/ip_forward", "net/ipv6/conf/all/forwarding")  # set to 1 (no procps)
# What the guest does not inherit from the caller's environment: this shell's own bookkeeping and
# handles on the host session (agent sockets, display, bus) that mean nothing inside the VM.
HOST_ONLY_ENV = frozenset({
    "PWD", "OLDPWD", "SHLVL", "_", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "DISPLAY", "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY", "TMUX", "STY",
})
# The root file system reaches the guest over 9p without caching: every stat() and open() is a
# round trip to the host, and under software emulation Python's imports took a minute
# (``import mgmtbench.lab.nsconfig``: 50-65 s, beyond the lab's 60 s limit for a namespace
# helper). So the host root is exported a second time, remounted read-only with cache=loose, and
# the Python installations are bind-mounted from it: the same import then takes ~20 s.
CACHED_ROOT = "/run/netem-vm-root"
STATUS_FILE = "status"  # CMD's exit code, written by the guest into the shared run directory
PREPARE_FAILED = 97  # the guest could not be made ready for the lab (said why on stderr)


@dataclass(frozen=True, order=True)
class Kernel:
    """An installed kernel image whose modules include sch_netem."""

    version_key: tuple[int | str, ...]
    version: str
    image: Path


def version_key(version: str) -> tuple[int | str, ...]:
    """Sort key for kernel versions: ``6.1.0-56-amd64`` after ``6.1.0-9-amd64``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"[.-]", version))


def stock_kernels(boot: Path = Path("/boot"),
                  modules_root: Path = Path("/lib/modules")) -> list[Kernel]:
    """Installed kernels (``/boot/vmlinuz-<version>``) that ship sch_netem, oldest first."""
    found = []
    for image in boot.glob("vmlinuz-*"):
        version = image.name.removeprefix("vmlinuz-")
        if any((modules_root / version).glob(NETEM_MODULE + "*")):
            found.append(Kernel(version_key(version), version, image))
    return sorted(found)


def find_vng(*, beside_only: bool = False) -> str | None:
    """virtme-ng's ``vng``: next to this Python (its virtualenv), else on PATH unless
    ``beside_only``."""
    beside = Path(sys.executable).parent / "vng"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return None if beside_only else shutil.which("vng")


def missing(kernels: Sequence[Kernel], vng: str | None, qemu: str | None,
            busybox: bool) -> str | None:
    """One sentence saying what is missing to boot the VM, None if nothing is."""
    parts = []
    if not kernels:
        parts.append("a stock kernel with sch_netem (apt: linux-image-amd64)")
    if qemu is None:
        parts.append(f"{QEMU} (apt: qemu-system-x86)")
    if not busybox:
        parts.append("a static busybox (apt: busybox-static)")
    if vng is None:
        parts.append(f"virtme-ng's vng (pip: {VIRTME_NG})")
    if not parts:
        return None
    return ("netem_vm: cannot boot the netem VM: missing " + "; ".join(parts)
            + " (run with --install as root to install them)")


def install() -> None:
    """Install the Debian packages and virtme-ng that are missing (root)."""
    have = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n",
                           *APT_PACKAGES], capture_output=True, text=True, check=False).stdout
    installed = {line.split()[0] for line in have.splitlines() if line.endswith(" installed")}
    packages = [p for p in APT_PACKAGES if p not in installed]
    if packages:
        if os.geteuid() != 0:
            raise SystemExit(f"netem_vm: run as root to install {' '.join(packages)} "
                             f"(or: sudo apt-get install -y {' '.join(packages)})")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
                       check=True, env=env, stdout=subprocess.DEVNULL)
    if find_vng(beside_only=True) is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", VIRTME_NG, *VIRTME_NG_DEPENDENCIES],
                       check=True)


def guest_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment as the guest gets it (host-session handles left out)."""
    return {name: value for name, value in environ.items()
            if name not in HOST_ONLY_ENV and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)}


def python_prefixes(environ: Mapping[str, str]) -> list[Path]:
    """Where the Python that CMD finds on PATH lives (its virtualenv and base installation) and
    /usr: the read-only trees the guest reads from the cached mount."""
    prefixes = {Path("/usr")}
    python = shutil.which("python3", path=environ.get("PATH"))
    if python is not None:
        out = subprocess.run([python, "-c", "import sys; print(sys.prefix); print(sys.base_prefix)"],
                             capture_output=True, text=True, check=False, env=dict(environ)).stdout
        prefixes.update(Path(line).resolve() for line in out.splitlines() if line.startswith("/"))
    # Only the outermost of nested trees; never / itself.
    return sorted(p for p in prefixes
                  if p != Path("/") and not any(q in p.parents for q in prefixes))


def guest_script(command: Sequence[str], cwd: Path, environ: Mapping[str, str],
                 status: Path, cached: Sequence[Path] = ()) -> str:
    """The shell script the guest runs: make the guest ready for the lab, then CMD in ``cwd``
    with ``environ``, its exit code written to ``status``. ``cached``: trees to read through the
    cached mount of the host root."""
    fail = f"exit {PREPARE_FAILED}"
    lines = [
        "#!/bin/sh",
        "say() { echo \"netem_vm (guest): $*\" >&2; }",
        f"tag=$(awk '$2 == \"{CACHED_ROOT}\" {{print $1}}' /proc/mounts)",
        f"if [ -n \"$tag\" ] && umount {CACHED_ROOT} && mount -t 9p -o "
        f"ro,trans=virtio,version=9p2000.L,access=any,msize=512000,cache=loose \"$tag\" "
        f"{CACHED_ROOT}; then",
        *(f"    mount --bind {CACHED_ROOT}{shlex.quote(str(p))} {shlex.quote(str(p))}"
          for p in cached),
        "else say 'no cached mount of the host root: Python will be slow'; fi",
        # Modules come from /lib/modules/$(uname -r), the kernel package's own.
        f"for m in {' '.join(GUEST_MODULES)}; do",
        f"    modprobe \"$m\" || {{ say \"modprobe $m failed (kernel $(uname -r))\"; {fail}; }}",
        "done",
        "if [ ! -c /dev/net/tun ]; then mkdir -p /dev/net && mknod /dev/net/tun c 10 200 || "
        f"{{ say 'no /dev/net/tun'; {fail}; }}; fi",
        *(f"echo 1 > /proc/sys/{name} || {{ say 'cannot set {name}'; {fail}; }}"
          for name in GUEST_SYSCTLS),
        "ip link set lo up",
        f"touch /run/.netem_vm && rm /run/.netem_vm || {{ say '/run is not writable'; {fail}; }}",
        # The lab's netem backend adds exactly this: prove it works before running anything.
        "ip link add nvmprobe0 type veth peer name nvmprobe1 && "
        "tc qdisc add dev nvmprobe0 root netem delay 1ms && "
        "tc qdisc show dev nvmprobe0 | grep -q netem || "
        f"{{ say 'tc qdisc add ... netem failed'; {fail}; }}",
        "ip link del nvmprobe0",
        f"echo \"netem_vm (guest): kernel $(uname -r), {' '.join(GUEST_MODULES)} loaded, "
        f"netem qdisc works, $(nproc) CPUs\" >&2",
        f"cd {shlex.quote(str(cwd))} || {{ say 'cannot enter the working directory'; {fail}; }}",
    ]
    lines += [f"export {name}={shlex.quote(value)}"
              for name, value in sorted(guest_environment(environ).items())]
    lines += [
        shlex.join(command),
        f"echo $? > {shlex.quote(str(status))}",
    ]
    return "\n".join(lines) + "\n"


def copy_stream(source: BinaryIO, sink: BinaryIO,
                around: Callable[[], AbstractContextManager[None]] = nullcontext) -> None:
    """Copy ``source`` to ``sink`` until end of file, flushing as it goes; each write inside
    ``around()`` (the progress lines off the terminal meanwhile)."""
    while chunk := os.read(source.fileno(), 65536):  # what is there, without waiting for more
        with around():
            sink.write(chunk)
            sink.flush()


def wait(process: subprocess.Popen[bytes], timeout: float | None,
         tick: Callable[[], None]) -> int | None:
    """``process``'s exit code, or None if it is still running after ``timeout`` seconds;
    ``tick()`` about every second meanwhile."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        try:
            return process.wait(timeout=1.0 if left is None else max(0.0, min(1.0, left)))
        except subprocess.TimeoutExpired:
            if left is not None and left <= 1.0:
                return None
            tick()


def vng_command(vng: str, kernel: Kernel, script: Path, cwd: Path, rundir: Path, cpus: int,
                memory: str, qemu_opts: str = "") -> list[str]:
    """The ``vng`` command line that boots ``kernel`` and runs ``script``."""
    return [vng, "--run", str(kernel.image), "--disable-kvm", "--force-9p",
            "--cpus", str(cpus), "--memory", memory,
            *([f"--qemu-opts={qemu_opts}"] if qemu_opts else []),
            "--rwdir", str(cwd), "--rwdir", str(rundir), "--rodir", f"{CACHED_ROOT}=/",
            "--cwd", str(cwd),
            "--exec", f"sh {shlex.quote(str(script))}"]


def run(command: Sequence[str], *, cpus: int, memory: str, timeout: float | None,
        qemu_opts: str = "") -> int:
    """Boot the newest stock kernel and run ``command`` in it; its exit code."""
    kernels = stock_kernels()
    vng = find_vng()
    why = missing(kernels, vng, shutil.which(QEMU), BUSYBOX_STATIC.is_file())
    if why is not None or vng is None:
        print(why, file=sys.stderr)
        return 1
    kernel, cwd = kernels[-1], Path.cwd()
    with tempfile.TemporaryDirectory(prefix="netem-vm-") as tmp:
        rundir = Path(tmp)
        status = rundir / STATUS_FILE
        script = rundir / "guest.sh"
        script.write_text(guest_script(command, cwd, os.environ, status,
                                       python_prefixes(os.environ)))
        script.chmod(0o700)  # it holds the caller's environment
        print(f"netem_vm: booting {kernel.image} (qemu, software emulation, {cpus} CPUs, "
              f"{memory}) to run: {shlex.join(command)}", file=sys.stderr, flush=True)
        argv = vng_command(vng, kernel, script, cwd, rundir, cpus, memory, qemu_opts)
        # Elapsed time and what is left by the last run of the same command (kept under
        # ~/.cache/mgmtbench) on the terminal, between the guest's lines (mgmtbench.progress).
        key = "netem vm " + hashlib.sha256(shlex.join(command).encode()).hexdigest()[:16]
        with progress.board(sys.stderr) as shown, progress.task(
                "netem VM", ["vm"], noun="runs", remember_as=key) as vm:
            vm.begin("vm", f"kernel {kernel.version}")
            returncode = _boot(argv, timeout, shown)
            if status.is_file():  # CMD ran to its end: the time to expect next time
                vm.step("vm")
        if returncode is None:
            print(f"netem_vm: the VM did not finish within {timeout:g} s: stopped it",
                  file=sys.stderr)
            return 1
        if status.is_file():
            return int(status.read_text().strip() or 1)
        if returncode == PREPARE_FAILED:
            print("netem_vm: the guest could not be prepared for the lab (see above)",
                  file=sys.stderr)
        else:
            print(f"netem_vm: the VM did not run the command (vng exited {returncode})",
                  file=sys.stderr)
        return returncode or 1


def _boot(argv: Sequence[str], timeout: float | None,
          shown: progress.Board | None) -> int | None:
    """Run ``argv`` (vng and its qemu), the guest's output relayed between the progress lines;
    its exit code (None: stopped after ``timeout`` seconds)."""
    # The guest's output comes through pipes, copied here: qemu opens its stdout and stderr
    # by path (/proc/self/fd/1 and 2) with O_TRUNC, which would empty a log file this runs
    # with (everything written before the VM booted: earlier CI steps too) and write over
    # it from the start. No stdin: nothing to forward, and a terminal stays as it was.
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        relays = [threading.Thread(target=copy_stream, args=(source, sink, progress.hidden),
                                   daemon=True)
                  for source, sink in ((process.stdout, sys.stdout.buffer),
                                       (process.stderr, sys.stderr.buffer))]
        for relay in relays:
            relay.start()
        returncode = wait(process, timeout, shown.refresh if shown else lambda: None)
        if returncode is None:
            os.killpg(process.pid, signal.SIGKILL)  # vng and its qemu
            process.wait()
        for relay in relays:
            relay.join(timeout=5)
    return returncode


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``[--install] [--cpus N] [--memory M] [--timeout S] -- CMD...``."""
    parser = argparse.ArgumentParser(
        prog="netem_vm.py", description="Run CMD in a VM booted with Debian's stock kernel "
        "(which has sch_netem), in this directory and environment; exit with CMD's code.")
    parser.add_argument("--install", action="store_true",
                        help=f"install what is missing first (root): apt {' '.join(APT_PACKAGES)}, "
                             f"pip {VIRTME_NG}")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--memory", default="4G")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop the VM after this many seconds (exit code 1)")
    parser.add_argument("--qemu-opts", default="", help="more qemu options (vng --qemu-opts)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: netem_vm.py [--install] -- CMD...")
    if args.install:
        install()
    return run(command, cpus=args.cpus, memory=args.memory, timeout=args.timeout,
               qemu_opts=args.qemu_opts)


if __name__ == "__main__":
    sys.exit(main())
