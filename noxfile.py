"""Developer and CI sessions: ``nox -s bench`` (the main job), ``nox -s tests``, ``nox -s lint``,
``nox -s typecheck``, ``nox -s docker`` (the docker device runtime, with a private dockerd),
``nox -s lock`` (refresh the lock). ``./dev SESSION`` runs them on a fresh machine.

Sessions install the project with the extras they need into their own virtualenv, every package
pinned by ``constraints.txt`` (the lock, refreshed on purpose with ``nox -s lock``); extra
arguments go to the tool (``nox -s tests -- -k netmiko``).
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = "3.11"
LOCK = "constraints.txt"


def install(session: nox.Session, *args: str) -> None:
    """``pip install`` with every version pinned by the lock."""
    session.install("-c", LOCK, *args)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite: real emulators, real sockets, real OpenSSH and curl."""
    install(session, "-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """The default matrix: every client x its modes, at local, regional and intercontinental,
    5 commands, against the embedded emulator in a lab. Saves JSON under .benchmarks/.

    Extra arguments go to pytest: ``nox -s bench -- -k regional``,
    ``nox -s bench -- --commands 1,5,10,25,50 --profiles all``.
    """
    install(session, "-e", ".[test]")
    session.run(
        "pytest", "benchmarks/test_transport_modes.py", "-p", "no:cacheprovider",
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=mean,median,min,max,stddev", "--benchmark-sort=mean",
        "-o", "console_output_style=count", "-v", *session.posargs,
    )


@nox.session(python=PYTHON)
def fleet(session: nox.Session) -> None:
    """Client libraries at concurrency: every fleet runner at 1, 10, 50, 100 and 200 sessions (each
    to its own device) at local and regional, then a sweep of a 1,000-device lab. Saves JSON under
    .benchmarks/ like ``bench``; ``mgmtbench report`` adds curves and fleet projections.

    Extra arguments go to pytest: ``nox -s fleet -- --concurrency 10,100 --clients asyncssh``.
    """
    install(session, "-e", ".[test]")
    session.run(
        "pytest", "benchmarks/test_concurrency.py", "benchmarks/test_fleet_lab.py",
        "-p", "no:cacheprovider", "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=median,min,max,rounds", "--benchmark-sort=name",
        "-o", "console_output_style=count", "-v", *session.posargs,
    )


# The published study's (clibench v0.7.0) profiles and command counts.
STUDY_PROFILES = "local,campus,regional,continental,intercontinental,transpacific"
STUDY_COMMANDS = "1,5,10,25,50"


@nox.session(python=PYTHON)
def study(session: nox.Session) -> None:
    """A run with everything the published study's tables need, then its report: the transport
    benchmark with ``--modes study`` at the study's profiles (local to transpacific) and command
    counts (1, 5, 10, 25, 50), asyncssh and httpx (the best client per transport), saved under
    .benchmarks/ like ``bench``; then ``mgmtbench report`` on it into study-report/ (the study's
    tables: against its published figures, PTY overhead, speed-up against ssh pty-fresh per
    profile, time against command count, 100 devices serially).

    About 40 minutes on 2 cores (330 benchmarks; estimated from a reduced run, local and regional
    at 1, 5 and 50 commands: 66 benchmarks in 2 min 46 s); transpacific and intercontinental
    take half of it, 50 commands nearly half. Extra arguments go to pytest and override the
    defaults: ``nox -s study -- --clients all``, ``nox -s study -- --profiles regional``;
    ``--modes`` with the study's eight mode names leaves out our pipelined and tls-resume (~30
    min).
    """
    install(session, "-e", ".[test]")
    started = time.time()
    session.run(
        "pytest", "benchmarks/test_transport_modes.py", "-p", "no:cacheprovider",
        "--modes", "study", "--profiles", STUDY_PROFILES, "--commands", STUDY_COMMANDS,
        "--clients", "asyncssh,httpx",
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=mean,median,min,max,stddev", "--benchmark-sort=mean",
        "-o", "console_output_style=count", "-v", *session.posargs,
    )
    saved = [p for p in Path(".benchmarks").glob("*/*.json") if p.stat().st_mtime >= started]
    if not saved:
        session.error("the benchmark saved no run under .benchmarks/ (every test skipped?)")
    run = max(saved, key=lambda p: p.stat().st_mtime)
    session.run("mgmtbench", "report", str(run), "--out", "study-report")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over everything (docstring rules for the public API: src/)."""
    install(session, "ruff")
    session.run("ruff", "check", "src", "tests", "benchmarks", "tools", "conftest.py",
                "noxfile.py")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over src, tests, benchmarks, tools, conftest.py and noxfile.py."""
    install(session, "-e", ".[typecheck]")
    session.run("mypy", *session.posargs)


@nox.session(python=PYTHON)
def lock(session: nox.Session) -> None:
    """Refresh constraints.txt from pyproject.toml (every extra, Python 3.11); commit the diff on
    purpose, with the reason."""
    install(session, "uv")
    session.run("uv", "pip", "compile", "pyproject.toml", "--all-extras", "--universal",
                "--python-version", PYTHON, "--upgrade", "-q", "-o", LOCK,
                "--custom-compile-command", "nox -s lock")


DOCKERD_STATE = "/run/mgmtbench-dockerd"  # socket, pid file, exec root of the session's dockerd
# What the bench runner container needs to build lab networks (as in docker/compose.yaml):
# netlink and namespaces, sysctls under /proc/sys in its lab namespaces, the TUN device.
RUNNER_PRIVILEGES = ("--cap-add", "NET_ADMIN", "--cap-add", "SYS_ADMIN",
                     "--security-opt", "apparmor=unconfined",
                     "--security-opt", "systempaths=unconfined", "--device", "/dev/net/tun")


@nox.session(python=PYTHON)
def docker(session: nox.Session) -> None:
    """The docker device runtime for real (root): installs Docker Engine (Debian's docker.io) and
    debootstrap if missing, starts a private dockerd, builds a local base image (no registry
    needed) and the device image on it, runs the docker runtime tests and a benchmark through an
    impaired link with ``--device-runtime docker``, builds the bench runner image and runs a
    benchmark in it (its own lab inside its container), and stops dockerd whatever happened.

    Extra arguments go to the benchmark's pytest (``nox -s docker -- --clients paramiko``).
    """
    if os.geteuid() != 0:
        session.skip("the docker session needs root (dockerd, lab namespaces)")
    install(session, "-e", ".[test]")
    dockerd = ["python", "tools/dockerd.py", "--state", DOCKERD_STATE]
    env = {"DOCKER_HOST": f"unix://{DOCKERD_STATE}/docker.sock", "MGMTBENCH_REQUIRE_DOCKER": "1"}
    session.run(*dockerd, "install")
    try:
        session.run(*dockerd, "start")
        session.run(*dockerd, "base-image", "mgmtbench-base:bookworm")
        session.run(*dockerd, "build", "--base", "mgmtbench-base:bookworm",
                    "--tag", "mgmtbench-device:latest")
        session.run("pytest", "tests/test_docker_runtime.py", "-p", "no:cacheprovider",
                    "--device-image", "mgmtbench-device:latest", env=env)
        session.run("pytest", "benchmarks/test_transport_modes.py", "-p", "no:cacheprovider",
                    "--device-runtime", "docker", "--device-image", "mgmtbench-device:latest",
                    "--profiles", "regional", "--clients", "asyncssh,httpx",
                    "--benchmark-columns=mean,median,min,max", *session.posargs, env=env)
        # The bench runner image, run as compose.yaml runs it: it builds its own impaired lab
        # inside its container and benchmarks through it.
        session.run(*dockerd, "build", "--base", "mgmtbench-base:bookworm", "--target", "runner",
                    "--tag", "mgmtbench-runner:latest")
        session.run("docker", "run", "--rm", *RUNNER_PRIVILEGES, "mgmtbench-runner:latest",
                    "--profiles", "regional", "--clients", "asyncssh,httpx", "--commands", "1",
                    env=env, external=True)
    finally:
        session.run(*dockerd, "stop")


NETEM_OUT = ".benchmarks/netem-vm"  # the netem session's JSON: lab checks and benchmarks per backend
# The lab tests that still mean something under the VM's software emulation (qemu TCG, no KVM):
# the wire facts (loss per direction and round trip, packets and bytes of one exchange, the
# emulator's answers over SSH and HTTPS behind the link). The timing tests are held to bounds of
# 0.3-1.5 ms that TCG alone exceeds: in the VM netem's own ICMP RTT at regional is 31.6 ms for
# 30 configured and the TCP echo 34.9 ms (see the README, "How netem is proven"); each
# instrument's RTT is compared with its configuration and between backends by
# tools/compare_backends.py instead, with a tolerance for emulation.
NETEM_VM_LAB_TESTS = "loss_rate or counters_account or emulator_answers"


@nox.session(python=PYTHON)
def netem(session: nox.Session) -> None:
    """The netem link backend, proven on Debian's stock kernel in a VM (root): installs qemu, the
    kernel package and virtme-ng if missing (``tools/netem_vm.py --install``), boots the kernel
    once under software emulation and runs in it: the lab tests with ``--link-backend netem``,
    ``mgmtbench lab check`` through netem and through the tun delay line, and a short transport
    benchmark (asyncssh, httpx at regional) through each; then ``tools/compare_backends.py``
    holds the two side by side (packets per iteration, each instrument's RTT). Results under
    .benchmarks/netem-vm/.

    Extra arguments go to the lab tests' pytest (``nox -s netem -- -k loss``).
    """
    if os.geteuid() != 0:
        session.skip("the netem session needs root (it installs packages and boots a VM whose "
                     "lab network needs namespaces): run it with sudo")
    install(session, "-e", ".[test]")
    os.makedirs(NETEM_OUT, exist_ok=True)
    lab_tests = ["pytest", "tests/test_lab.py", "-p", "no:cacheprovider", "--link-backend", "netem",
                 "-k", NETEM_VM_LAB_TESTS, "-v", "-s", *session.posargs]
    steps = [lab_tests]
    for backend in ("netem", "tun"):
        steps += [
            ["sh", "-c", "mgmtbench lab check --profile regional --link-backend "
             f"{backend} --json > {NETEM_OUT}/lab-check-{backend}.json"],
            ["pytest", "benchmarks/test_transport_modes.py", "-p", "no:cacheprovider",
             "--profiles", "regional", "--clients", "asyncssh,httpx", "--commands", "5",
             "--link-backend", backend, f"--benchmark-json={NETEM_OUT}/transport-{backend}.json",
             "--benchmark-columns=mean,median,min,max"],
        ]
    steps.append(["python", "tools/compare_backends.py", f"{NETEM_OUT}/transport-netem.json",
                  f"{NETEM_OUT}/transport-tun.json", "--lab-check",
                  f"{NETEM_OUT}/lab-check-netem.json", f"{NETEM_OUT}/lab-check-tun.json",
                  "--rtt-tolerance", "0.25"])
    # One boot for everything; every step runs even if an earlier one failed, the VM's exit code
    # says whether any did.
    script = "failed=0\n" + "".join(
        f"echo {shlex.quote('== netem VM: ' + shlex.join(step))}; SECONDS=0; "
        f"{shlex.join(step)} || failed=1; "
        f"echo \"== took $SECONDS s\"\n" for step in steps) + "exit $failed\n"
    session.run("python", "tools/netem_vm.py", "--install", "--timeout", "2400", "--",
                "bash", "-c", script)
