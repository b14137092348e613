"""A private Docker Engine for CI and for trying the docker runtime on a machine without one.

``python tools/dockerd.py ACTION`` (root, from the repository root; CI tooling, not part of the
mgmtbench package: ``nox -s docker`` runs it):

- ``install``: Docker Engine (Debian's ``docker.io``) and ``debootstrap`` from apt if missing;
- ``start``: ``dockerd`` with its own socket, pid file, exec root and data root (no bridge, no
  iptables rules: the lab wires device containers itself), waiting for ``docker info``;
- ``base-image NAME``: a Debian bookworm image with Python 3.11 made without a registry:
  ``debootstrap --variant=minbase`` from the mirror apt uses, then ``docker import`` (the rootfs
  tarball is cached under /var/cache/mgmtbench, so the next run only imports it);
- ``build``: the project's images (``docker/Dockerfile``) on that base, trusting the machine's
  locally added CAs (``/usr/local/share/ca-certificates``) while pip downloads, for proxies that
  inspect TLS;
- ``stop``: stop that ``dockerd`` (and its containerd), remove its socket, exec root and data root.

The daemon's socket is ``unix://STATE/docker.sock``: point ``DOCKER_HOST`` at it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STATE = Path("/run/mgmtbench-dockerd")
DATA_ROOT = Path("/var/lib/mgmtbench/dockerd")
CACHE = Path("/var/cache/mgmtbench")
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
SUITE = "bookworm"  # Python 3.11
LOCAL_CAS = Path("/usr/local/share/ca-certificates")


def log(message: str) -> None:
    print(f"dockerd: {message}", file=sys.stderr, flush=True)


def docker_env(state: Path) -> dict[str, str]:
    return {**os.environ, "DOCKER_HOST": f"unix://{state / 'docker.sock'}"}


def install() -> None:
    missing = [pkg for pkg, binary in (("docker.io", "dockerd"), ("debootstrap", "debootstrap"))
               if shutil.which(binary) is None and not Path("/usr/sbin", binary).exists()]
    if not missing:
        return
    log(f"installing {', '.join(missing)} from apt")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                   check=True, env=env)


def start(state: Path, data_root: Path, timeout: float = 60) -> None:
    state.mkdir(parents=True, exist_ok=True)
    data_root.mkdir(parents=True, exist_ok=True)
    pidfile = state / "dockerd.pid"
    if _running(pidfile):
        log(f"already running (pid {pidfile.read_text().strip()})")
        return
    dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
    with (state / "dockerd.log").open("ab") as out:
        process = subprocess.Popen(
            [dockerd, "--host", f"unix://{state / 'docker.sock'}", "--pidfile", str(pidfile),
             "--exec-root", str(state / "exec"), "--data-root", str(data_root),
             "--bridge", "none", "--iptables=false", "--ip-masq=false"],
            stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while subprocess.run(["docker", "info"], env=docker_env(state), capture_output=True,
                         timeout=30).returncode != 0:
        if process.poll() is not None or time.monotonic() > deadline:
            tail = (state / "dockerd.log").read_text(errors="replace").strip().splitlines()[-3:]
            stop(state, data_root)
            raise SystemExit("dockerd did not start: " + " | ".join(tail))
        time.sleep(0.2)
    log(f"dockerd {process.pid} ready on unix://{state / 'docker.sock'}")


def stop(state: Path, data_root: Path | None) -> None:
    """Stop the daemon (SIGTERM, then SIGKILL after 30 s) and remove what it left."""
    pidfiles = [state / "dockerd.pid", state / "exec" / "containerd" / "containerd.pid"]
    for pidfile in pidfiles:
        pid = _running(pidfile)
        if pid:
            os.kill(pid, signal.SIGTERM)
            if not _wait_gone(pid, 30):
                os.kill(pid, signal.SIGKILL)
                _wait_gone(pid, 10)
            log(f"stopped {pidfile.stem} {pid}")
    for root in (state, data_root):
        if root is not None and root.exists():
            _unmount_below(root)
            shutil.rmtree(root, ignore_errors=True)
    if data_root is not None:
        with contextlib.suppress(OSError):  # /var/lib/mgmtbench, if nothing else is in it
            data_root.parent.rmdir()


def _running(pidfile: Path) -> int | None:
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    return False


def _unmount_below(root: Path) -> None:
    prefix = str(root.resolve()) + "/"
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", mount], check=False)


def apt_mirror() -> str:
    """The Debian mirror apt uses (deb822 ``URIs:`` or a one-line ``deb URI SUITE`` source)."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        if not path.is_file() or path.suffix not in (".list", ".sources", ""):
            continue
        text = path.read_text(errors="replace")
        for stanza in re.split(r"\n\s*\n", text):
            uri = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
            if uri and suites and SUITE in suites.group(1).split():
                return uri.group(1)
        for line in text.splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[0] == "deb" and fields[2] == SUITE:
                return fields[1] if not fields[1].startswith("[") else fields[2]
    return "http://deb.debian.org/debian"


def base_image(state: Path, name: str) -> None:
    env = docker_env(state)
    if subprocess.run(["docker", "image", "inspect", name], env=env,
                      capture_output=True).returncode == 0:
        log(f"base image {name} exists")
        return
    tarball = CACHE / f"rootfs-{SUITE}-{'-'.join(BASE_PACKAGES)}.tar"
    if not tarball.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        mirror = apt_mirror()
        log(f"debootstrap {SUITE} from {mirror} (cached in {tarball})")
        with tempfile.TemporaryDirectory(prefix="mgmtbench-rootfs-", dir="/var/tmp") as tmp:
            rootfs = Path(tmp) / "rootfs"
            subprocess.run(["debootstrap", "--variant=minbase",
                            f"--include={','.join(BASE_PACKAGES)}", SUITE, str(rootfs), mirror],
                           check=True, stdout=subprocess.DEVNULL)
            shutil.rmtree(rootfs / "var" / "cache" / "apt" / "archives", ignore_errors=True)
            partial = tarball.with_suffix(".partial")
            subprocess.run(["tar", "-C", str(rootfs), "-cf", str(partial), "."], check=True)
            partial.replace(tarball)
    log(f"importing {tarball} as {name}")
    subprocess.run(["docker", "import", str(tarball), name], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def extra_ca_certs(paths: list[Path]) -> str:
    """PEM text of every ``*.crt``/``*.pem`` under ``paths`` (files or folders)."""
    pems = []
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.suffix in (".crt", ".pem")) \
            if path.is_dir() else [path]
        pems += [f.read_text().strip() for f in files if f.is_file()]
    return "\n".join(pems)


def build(state: Path, base: str, tag: str, target: str, context: Path, cas: list[Path]) -> None:
    command = ["docker", "build", "--network", "host", "--file", str(context / "docker" /
               "Dockerfile"), "--target", target, "--build-arg", f"BASE={base}", "--tag", tag]
    pem = extra_ca_certs(cas)
    if pem:
        command += ["--build-arg", f"EXTRA_CA_CERTS={pem}"]
    log(f"building {tag} ({target}) on {base}")
    started = time.monotonic()
    subprocess.run([*command, str(context)], check=True, env=docker_env(state))
    log(f"built {tag} in {time.monotonic() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/dockerd.py",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--state", type=Path, default=STATE,
                        help="socket, pid file, exec root and log (default: %(default)s)")
    parser.add_argument("--data-root", type=Path, default=DATA_ROOT,
                        help="images and containers; removed by stop (default: %(default)s)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("install", help="install docker.io and debootstrap if missing")
    sub.add_parser("start", help="start dockerd and wait until it answers")
    sub.add_parser("stop", help="stop dockerd and remove its folders")
    base = sub.add_parser("base-image", help="a local Debian + Python base image")
    base.add_argument("name", nargs="?", default="mgmtbench-base:bookworm")
    image = sub.add_parser("build", help="build an image from docker/Dockerfile")
    image.add_argument("--base", default="mgmtbench-base:bookworm")
    image.add_argument("--tag", default="mgmtbench-device:latest")
    image.add_argument("--target", default="device", choices=["device", "runner"])
    image.add_argument("--context", type=Path, default=Path.cwd())
    image.add_argument("--extra-ca-certs", type=Path, action="append", default=None,
                       help="PEM files or folders to trust during the build (default: "
                            f"{LOCAL_CAS} if it exists)")
    args = parser.parse_args(argv)
    if args.action == "install":
        install()
    elif args.action == "start":
        start(args.state, args.data_root)
    elif args.action == "stop":
        stop(args.state, args.data_root)
    elif args.action == "base-image":
        base_image(args.state, args.name)
    else:
        cas = args.extra_ca_certs if args.extra_ca_certs is not None else (
            [LOCAL_CAS] if LOCAL_CAS.is_dir() else [])
        build(args.state, args.base, args.tag, args.target, args.context, cas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
