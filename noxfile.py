"""Developer and CI sessions: ``nox -s bench`` (the main job), ``nox -s tests``, ``nox -s lint``,
``nox -s typecheck``, ``nox -s docs`` (the documentation site, ``mkdocs build --strict``),
``nox -s examples`` (the docs' example run, from ``bench``'s job), ``nox -s tcp`` (the lab's own
TCP: cubic against bbr),
``nox -s matrix`` (the SSH algorithm matrix), ``nox -s throughput``
(server throughput against connections), ``nox -s docker`` (the docker device runtime, with a
private dockerd), ``nox -s soak`` (the emulator under a hostile mix), ``nox -s lock`` (refresh
the lock). ``./dev SESSION`` runs them on a fresh machine.

The sessions that run the project share one virtualenv, ``.nox/project`` (the project with its
test and typecheck extras); lint and lock have their own. Every package is pinned by
``constraints.txt`` (the lock, refreshed on purpose with ``nox -s lock``); extra arguments go to
the tool (``nox -s tests -- -k netmiko``).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = "3.11"
LOCK = "constraints.txt"
# Workers of the parallel pass: its tests mostly wait on sockets (three modules' worth used 28 %
# of one core), so three share two cores well: 1,070 tests in 146 s instead of ~13 minutes.
TEST_WORKERS = "3"


# niquests' urllib3-future, as a wheel, adds a startup hook that copies itself over the real
# urllib3 at every interpreter start (Requests, NAPALM and docker's client would then run on the
# fork); built from source with URLLIB3_NO_OVERRIDE=1 it installs as urllib3_future only.
NO_OVERRIDE = {"URLLIB3_NO_OVERRIDE": "1"}


PIP_ARGS = ("-c", LOCK, "--no-binary=urllib3-future", "--no-cache-dir")


def install(session: nox.Session, *args: str) -> None:
    """``pip install`` with every version pinned by the lock (urllib3-future kept apart)."""
    session.install(*PIP_ARGS, *args, env=NO_OVERRIDE)


#: The one virtualenv of every session that runs the project with its test extras (tests, bench,
#: typecheck, docker, netem ...). nox gives each session a virtualenv of its own, and the ~200
#: packages took 2-2.5 minutes to install into each (CI installed them four times, ~8 of its
#: minutes); so these sessions are declared without one (:data:`project_session`) and share
#: this one, installed by :func:`use_project` only when the lock or pyproject.toml changed.
PROJECT_ENV = Path(".nox/project")
PROJECT_EXTRAS = "test,typecheck,docs"
#: A session in :data:`PROJECT_ENV` (nox makes no virtualenv for it).
project_session = nox.session(venv_backend="none")


def use_project(session: nox.Session) -> None:
    """Make or update :data:`PROJECT_ENV` (the project editable, with ``PROJECT_EXTRAS``, every
    version from the lock) and put it first on the session's ``PATH``, as nox does a session's
    own virtualenv. pip runs only when the lock, pyproject.toml or the extras changed since the
    last install that finished (a stamp in the virtualenv says which), so one session never
    reinstalls the project under another that is running."""
    python = PROJECT_ENV / "bin" / "python"
    wanted = hashlib.sha256(b"\0".join([
        Path(LOCK).read_bytes(), Path("pyproject.toml").read_bytes(), PROJECT_EXTRAS.encode(),
    ])).hexdigest()
    stamp = PROJECT_ENV / "mgmtbench-installed"
    if not python.exists():
        session.run(sys.executable, "-m", "virtualenv", "--quiet", "--python", PYTHON,
                    str(PROJECT_ENV), external=True)
    if not stamp.exists() or stamp.read_text().strip() != wanted:
        stamp.unlink(missing_ok=True)
        session.run(str(python), "-m", "pip", "install", "--quiet", *PIP_ARGS, "-e",
                    f".[{PROJECT_EXTRAS}]", env=NO_OVERRIDE, external=True)
        stamp.write_text(wanted + "\n")
    bin_dir = str((PROJECT_ENV / "bin").resolve())
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    os.environ["VIRTUAL_ENV"] = str(PROJECT_ENV.resolve())


@project_session
def tests(session: nox.Session) -> None:
    """The test suite: real emulators, real sockets, real OpenSSH and curl."""
    use_project(session)
    # Two passes (see conftest.py): the tests that may share the machine, on TEST_WORKERS
    # pytest-xdist workers, then the ``serial`` ones (labs; time, CPU and memory bounds) alone.
    # A pass that selects nothing (``-- -k ...``) is not a failure.
    session.run("pytest", "-m", "not serial", "-n", TEST_WORKERS, *session.posargs,
                success_codes=[0, 5])
    session.run("pytest", "-m", "serial", "--durations=25", *session.posargs,
                success_codes=[0, 5])


#: The main job's pytest arguments (``bench``, and ``examples``, which runs the same job).
BENCH = ("benchmarks/test_transport_modes.py", "-p", "no:cacheprovider",
         "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
         "--benchmark-columns=mean,median,min,max,stddev", "--benchmark-sort=mean",
         "-o", "console_output_style=count", "-v")


@project_session
def bench(session: nox.Session) -> None:
    """The default matrix: every client x its modes, at local, regional and intercontinental,
    5 commands, against the embedded emulator in a lab. Saves JSON under .benchmarks/.

    Extra arguments go to pytest: ``nox -s bench -- -k regional``,
    ``nox -s bench -- --commands 1,5,10,25,50 --profiles all``.
    """
    use_project(session)
    session.run("pytest", *BENCH, *session.posargs)


@project_session
def examples(session: nox.Session) -> None:
    """The documentation's example run, regenerated (root: the bench's lab network): ``bench``'s
    job (the same pytest command; extra arguments go to pytest as there, and are named in the
    example), its JSON also saved to a file of its own, then ``tools/examples.py`` writes
    ``mgmtbench report`` of it into docs/examples/<date>/ with a README line naming the date and
    the commit (``git rev-parse --short HEAD``), removes the example before it and points the
    README's and docs/results.md's "example" lines at the new one. As long as ``bench``; commit
    the folder and the two lines.
    """
    if os.geteuid() != 0:
        session.error("the example run needs root (the bench's lab network): sudo ./dev examples")
    use_project(session)
    commit = str(session.run("git", "rev-parse", "--short", "HEAD", external=True,
                             silent=True)).strip()
    with tempfile.TemporaryDirectory(prefix="mgmtbench-examples-") as scratch:
        run = Path(scratch) / "run.json"
        session.run("pytest", *BENCH, f"--benchmark-json={run}", *session.posargs)
        session.run("python", "tools/examples.py", str(run), "--commit", commit,
                    "--arguments", shlex.join(session.posargs))


@project_session
def fleet(session: nox.Session) -> None:
    """Client libraries at concurrency: every fleet runner at 1, 10, 50, 100 and 200 sessions (each
    to its own device) at local and regional, then a sweep of a 1,000-device lab. Saves JSON under
    .benchmarks/ like ``bench``; ``mgmtbench report`` adds curves and fleet projections.

    Extra arguments go to pytest: ``nox -s fleet -- --concurrency 10,100 --clients asyncssh``.
    """
    use_project(session)
    session.run(
        "pytest", "benchmarks/test_concurrency.py", "benchmarks/test_fleet_lab.py",
        "-p", "no:cacheprovider", "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=median,min,max,rounds", "--benchmark-sort=name",
        "-o", "console_output_style=count", "-v", *session.posargs,
    )


@project_session
def dask(session: nox.Session) -> None:
    """Fleets beyond one host (root): 1,000, 5,000 and 10,000 devices on a local Dask cluster of
    two workers, each in a network namespace of its own with its own labs (asyncssh, 200
    sessions at once in all, regional), after the concurrency benchmark's asyncssh curve at 50,
    100 and 200 sessions that the report projects the same fleets from; both saved under
    .benchmarks/ like ``bench``, the report (measured against projected) in dask-report/.

    About 8 minutes on 2 cores. Extra arguments go to the Dask benchmark's pytest:
    ``nox -s dask -- --dask-devices 1000 --dask-workers 4``, ``--dask-scheduler tcp://HOST:PORT``
    (a running cluster), ``--dask-ssh HOST1,HOST2,HOST3`` (Dask's SSHCluster).
    """
    use_project(session)
    started = time.time()
    common = ("-p", "no:cacheprovider", "--benchmark-autosave",
              "--benchmark-storage=file://.benchmarks", "--benchmark-columns=median,rounds",
              "-o", "console_output_style=count")
    session.run("pytest", "benchmarks/test_concurrency.py", *common, "--clients", "asyncssh",
                "--concurrency", "50,100,200", "--fleet-profiles", "regional")
    # A 10,000-device fleet's test (labs up, warm-up, a 3-minute round, labs down) may outlast
    # the suite's 15-minute limit per test on a slower machine.
    session.run("pytest", "benchmarks/test_fleet_dask.py", *common, "-s", "-o", "timeout=3600",
                "--dask-devices", "1000,5000,10000", *session.posargs)
    saved = sorted((p for p in Path(".benchmarks").glob("*/*.json")
                    if p.stat().st_mtime >= started), key=lambda p: p.stat().st_mtime)
    if len(saved) < 2:
        session.error("the benchmarks saved no runs under .benchmarks/ (every test skipped?)")
    session.run("mgmtbench", "report", *(str(p) for p in saved[-2:]), "--out", "dask-report")


# The published study's (clibench v0.7.0) profiles and command counts.
STUDY_PROFILES = "local,campus,regional,continental,intercontinental,transpacific"
STUDY_COMMANDS = "1,5,10,25,50"


@project_session
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
    use_project(session)
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


#: The modes the knob study times: each library's as-shipped default use (a new connection, a
#: kept one, a PTY session; HTTPS, NETCONF and gNMI likewise, and gNMI's subscription, where
#: pygnmi's subscribe-call knob acts; batch-exec, where hussh+tuned's proxy start costs); a
#: client runs those it supports.
KNOB_MODES = ("fresh-conn,reuse-conn,pty-fresh,keep-alive,fresh-session,reuse-session,"
              "subscribe-once,batch-exec")


@project_session
def knobs(session: nox.Session) -> None:
    """Libraries as shipped and as tuned: every library that declares knobs, as shipped, with each
    knob alone and ``+tuned`` (``--clients tuned``), side by side in one run at local and regional,
    5 commands, in the modes a user of each would pick (:data:`KNOB_MODES`; NETCONF with the CLI
    envelope only: a knob of the transport does not depend on the payload); saved under
    .benchmarks/ like ``bench``; then ``mgmtbench report`` on it into knobs-report/ (its "What to
    change in your code": the gain of each knob and the lines that make it).

    Extra arguments go to pytest and override the defaults: ``nox -s knobs -- --profiles local``.
    """
    use_project(session)
    started = time.time()
    session.run(
        "pytest", "benchmarks/test_transport_modes.py", "-p", "no:cacheprovider",
        "--clients", "tuned", "--modes", KNOB_MODES, "--payloads", "cli",
        "--profiles", "local,regional", "--commands", "5", "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=mean,median,min,max", "-o", "console_output_style=count", "-v",
        *session.posargs,
    )
    saved = [p for p in Path(".benchmarks").glob("*/*.json") if p.stat().st_mtime >= started]
    if not saved:
        session.error("the benchmark saved no run under .benchmarks/ (every test skipped?)")
    run = max(saved, key=lambda p: p.stat().st_mtime)
    session.run("mgmtbench", "report", str(run), "--out", "knobs-report")


@project_session
def matrix(session: nox.Session) -> None:
    """The SSH algorithm matrix (``benchmarks/test_ssh_algorithms.py``): OpenSSH ``ssh``,
    asyncssh and paramiko against the emulator and a real OpenSSH sshd, each behind a lab link,
    at local (every kex for connect, every cipher and every MAC for send and receive, 8 MB) and
    intercontinental (the reference cell of each operation); saved under .benchmarks/ like
    ``bench``; then ``mgmtbench report`` over EVERY saved run of the matrix into matrix-report/
    (each cell averaged across runs, the top 10 per operation, heatmaps, what is not supported).

    About 10 minutes on 2 cores (see docs/experiments/ssh-algorithms.md). Extra arguments go to
    pytest: ``nox -s matrix -- --ssh-matrix full --ssh-matrix-clients all`` (every kex x cipher x MAC,
    every client: hours), ``nox -s matrix -- --ssh-matrix-profiles local``.
    """
    use_project(session)
    session.run(
        "pytest", "benchmarks/test_ssh_algorithms.py", "-p", "no:cacheprovider",
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=mean,min,max,rounds", "--benchmark-sort=name",
        "-o", "console_output_style=count", *session.posargs,
    )
    runs = [p for p in sorted(Path(".benchmarks").glob("*/*.json"), key=lambda p: p.name)
            if '"experiment": "ssh-algorithms"' in p.read_text()]
    if not runs:
        session.error("no saved run has the SSH algorithm matrix (every test skipped?)")
    session.run("mgmtbench", "report", *map(str, runs), "--out", "matrix-report")


# Server throughput in the default run: MB per connection (the benchmark's own default is the
# issue's 100 MB, the study used 500) and the two ciphers of the table (of four).
THROUGHPUT_MB = "20"
THROUGHPUT_CIPHERS = "aes128-gcm,chacha20-poly1305"


@project_session
def throughput(session: nox.Session) -> None:
    """Server throughput against connections (root: lab links), then its report: 1, 2, 5, 10
    and 20 concurrent uploads to the emulator and to OpenSSH sshd, each pinned to one core and
    unpinned, with aes128-gcm and chacha20-poly1305, through the lab's unimpaired link (local)
    and a 1 Gbit/s one (1000mbit), OpenSSH ssh as the client; saved under .benchmarks/ like
    ``bench``, the report in throughput-report/.

    20 MB per connection, so the run fits about 10 minutes on 2 cores (the 1 Gbit/s link is
    shaped by netem, or by the kernel's token bucket (``tbf``) where the kernel has no netem).
    The whole experiment (all four ciphers, the issue's 100 MB): ``nox -s throughput --
    --throughput-ciphers all --throughput-mb 100`` (about an hour on 2 cores). Extra arguments
    go to pytest and override the defaults: ``--throughput-links local`` (the unlimited link
    only), ``--throughput-links loopback`` (no root), ``--throughput-directions upload,download``.
    """
    use_project(session)
    started = time.time()
    session.run(
        "pytest", "benchmarks/test_server_throughput.py", "-p", "no:cacheprovider",
        "--throughput-mb", THROUGHPUT_MB, "--throughput-ciphers", THROUGHPUT_CIPHERS,
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=median", "--benchmark-sort=name",
        "-o", "console_output_style=count", "-v", *session.posargs,
    )
    saved = [p for p in Path(".benchmarks").glob("*/*.json") if p.stat().st_mtime >= started]
    if not saved:
        session.error("the benchmark saved no run under .benchmarks/ (every test skipped?)")
    run = max(saved, key=lambda p: p.stat().st_mtime)
    session.run("mgmtbench", "report", str(run), "--out", "throughput-report")


@project_session
def tcp(session: nox.Session) -> None:
    """The lab's own TCP as an experiment (root: lab links): cubic against bbr on the device
    side at regional and intercontinental, side by side, for httpx batch-post, multi-cmd and
    keep-alive (5 commands), two large outputs, and SFTP/SCP upload and download (4 MB); about
    3 minutes. Saved under .benchmarks/ like ``bench``; extra arguments go to pytest
    (``nox -s tcp -- -k regional``)."""
    use_project(session)
    session.run(
        "pytest", "benchmarks/test_lab_tcp.py", "-p", "no:cacheprovider",
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=median,min,max", "--benchmark-sort=name",
        "-o", "console_output_style=count", "-v", *session.posargs,
    )


@project_session
def agent(session: nox.Session) -> None:
    """ssh-agent signing throughput and what agent-based login costs, then their report: a real
    ``ssh-agent`` signing for the raw protocol client, asyncssh, paramiko and the in-process key
    (key types x message sizes x unique/same, sampled), 1/2/4/8 raw clients at once with the
    agent's CPU; logins with a password, a key file and the agent per key type for asyncssh,
    paramiko and ``ssh`` at local and regional (root: the regional lab; without it only local
    runs), the server's host key type, and 50/200-session fleets through one agent. Saved under
    .benchmarks/ like ``bench``; the report in agent-report/.

    About 7 minutes on 2 cores, 4.5 of them benchmarks (see docs/experiments/ssh-agent.md).
    Extra arguments go to pytest: ``nox -s agent -- --agent-matrix full`` (every signer x key
    type x size x
    unique/same, every key type for logins, paramiko fleets and fleets at every profile:
    estimated 30-60 minutes, not yet run end to end), ``nox -s agent -- --agent-profiles
    local`` (no root needed), ``nox -s agent -- -k signing``.
    """
    use_project(session)
    started = time.time()
    session.run(
        "pytest", "benchmarks/test_agent_signing.py", "benchmarks/test_agent_login.py",
        "-p", "no:cacheprovider",
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=mean,median,rounds", "--benchmark-sort=name",
        "-o", "console_output_style=count", *session.posargs,
    )
    saved = [p for p in Path(".benchmarks").glob("*/*.json")
             if p.stat().st_mtime >= started and '"experiment": "agent-' in p.read_text()]
    if not saved:
        session.error("the benchmark saved no run under .benchmarks/ (every test skipped?)")
    run = max(saved, key=lambda p: p.stat().st_mtime)
    session.run("mgmtbench", "report", str(run), "--out", "agent-report")


# The edge proxy's default run: two WAN profiles for time against the WAN's RTT, every case at
# both, the 100-device concurrency benchmark at the first only (``--proxy-concurrency`` applies
# to every profile given; ``-k`` keeps it to regional).
EDGE_PROFILES = "regional,continental"


@project_session
def edge(session: nox.Session) -> None:
    """The edge proxy (root: the two-link lab), then its report: the study's proxy modes
    (``fresh-ssh``, ``pooled-ssh``, ``keep-alive``) through the four httpx clients, the tunnel
    through the head-end (asyncssh, paramiko, ``ssh``; Netmiko and Scrapli without ``-batch``),
    direct SSH ``pty-fresh`` and HTTPS ``batch-post`` over the same links, 5 commands, at
    regional and continental WANs behind a 2 ms campus link; 100 devices behind one proxy at
    regional, in the proxy modes and direct (HTTPS batch-post and keep-alive, SSH pty-fresh);
    saved under .benchmarks/ like
    ``bench``, the report (direct against proxy, time against the WAN's RTT) in edge-report/.

    Sized for about 10 minutes on 2 cores. Extra arguments go to pytest and override the
    defaults: ``nox -s edge -- --proxy-profiles campus,regional,continental``,
    ``--proxy-clients httpx``, ``--proxy-concurrency 0`` (no concurrency benchmark).
    """
    if os.geteuid() != 0:
        session.skip("the edge session needs root (lab namespaces and links)")
    use_project(session)
    started = time.time()
    session.run(
        "pytest", "benchmarks/test_edge_proxy.py", "-p", "no:cacheprovider",
        "--proxy-profiles", EDGE_PROFILES,
        "-k", "not concurrency or regional",
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=mean,median,rounds", "--benchmark-sort=name",
        "-o", "console_output_style=count", *session.posargs,
    )
    saved = [p for p in Path(".benchmarks").glob("*/*.json")
             if p.stat().st_mtime >= started and '"experiment": "edge-proxy' in p.read_text()]
    if not saved:
        session.error("the benchmark saved no run under .benchmarks/ (every test skipped?)")
    run = max(saved, key=lambda p: p.stat().st_mtime)
    session.run("mgmtbench", "report", str(run), "--out", "edge-report")


@project_session
def soak(session: nox.Session) -> None:
    """The emulator under a hostile mix (idle connections, garbage, slow bodies, password
    guessing, unread 256 MiB outputs, configuration floods) beside a legitimate client, on
    loopback: prints requests tried, crashes, the server's peak RSS and the legitimate client's
    error rate; fails on a crash or over 10 % errors (``--max-legit-errors``). 60 s by default:
    ``nox -s soak -- --minutes 10``; `mgmtbench serve` flags after ``--``."""
    use_project(session)
    session.run("python", "tools/soak.py", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over everything (docstring rules for the public API: src/)."""
    install(session, "ruff")
    session.run("ruff", "check", "src", "tests", "benchmarks", "tools", "conftest.py",
                "noxfile.py")


@project_session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over src, tests, benchmarks, tools, conftest.py and noxfile.py."""
    use_project(session)
    session.run("mypy", *session.posargs)


#: Where ``docs`` builds the site (gitignored).
SITE = "site"


@project_session
def docs(session: nox.Session) -> None:
    """The documentation site (mkdocs.yml, docs/) built with ``mkdocs build --strict`` into
    site/ (gitignored; open site/index.html): a link to a missing page or anchor, a page missing
    from the nav, any warning fails it. The plugin's options and fixtures are generated into
    their page from the code (tools/docs_hooks.py). Extra arguments go to ``mkdocs build``
    (``nox -s docs -- --verbose``)."""
    use_project(session)
    # Material's banner about MkDocs 2.0 is not about this site: kept out of the build's output.
    session.run("mkdocs", "build", "--strict", "--site-dir", SITE, *session.posargs,
                env={"NO_MKDOCS_2_WARNING": "1"})


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


@project_session
def docker(session: nox.Session) -> None:
    """The docker device runtime for real (root): installs Docker Engine (Debian's docker.io) and
    debootstrap if missing, starts a private dockerd, builds a local base image (no registry
    needed) and the device image on it, runs the docker runtime tests (and the edge proxy's
    chain with docker devices) and a benchmark through an impaired link with
    ``--device-runtime docker``, builds the bench runner image and runs a
    benchmark in it (its own lab inside its container), and stops dockerd whatever happened.

    Extra arguments go to the benchmark's pytest (``nox -s docker -- --clients paramiko``).
    """
    if os.geteuid() != 0:
        session.skip("the docker session needs root (dockerd, lab namespaces)")
    use_project(session)
    dockerd = ["python", "tools/dockerd.py", "--state", DOCKERD_STATE]
    env = {"DOCKER_HOST": f"unix://{DOCKERD_STATE}/docker.sock", "MGMTBENCH_REQUIRE_DOCKER": "1"}
    session.run(*dockerd, "install")
    try:
        session.run(*dockerd, "start")
        session.run(*dockerd, "base-image", "mgmtbench-base:bookworm")
        session.run(*dockerd, "build", "--base", "mgmtbench-base:bookworm",
                    "--tag", "mgmtbench-device:latest")
        session.run("pytest", "tests/test_docker_runtime.py", "tests/test_edge_docker.py",
                    "-p", "no:cacheprovider",
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
# What runs in the VM, under qemu's software emulation (TCG, no KVM), where every process is
# several times slower than on the host. The lab tests that still mean something there are the
# wire facts: loss per direction and round trip, packets and bytes of one exchange, the emulator's
# answers over SSH and HTTPS behind the link, and the wire tap's turns of a reply in pieces and of
# UDP and ICMP on a netem link (tests/test_wiretap.py on the session's regional lab). The timing
# tests are held to bounds of 0.3-1.5 ms that TCG alone exceeds (see docs/lab/netem.md, "How
# netem is proven"); each instrument's
# RTT is compared with its configuration by tools/compare_backends.py instead, with a tolerance
# for emulation. They run in the same pytest process as the netem benchmark, which shares their
# regional lab: starting a Python process and bringing a lab up are what take the time there.
# (Not tests/test_lab_udp.py: under the VM's software emulation its sender outruns the
# receiver, 50 % of 3,000 datagrams lost at 5 % configured, through tun as through netem.)
# Not the wire tap's exact counts of a connection and of pairs on one (connect_exchanges_close,
# pairs_on_an_open_connection: a tap's start each, ~20 s under TCG): the tap counts the same
# through any link, which the host's tests prove exact, and tools/compare_backends.py holds the
# netem benchmark's counts to the tun delay line's.
# Nor the emulator's answers over SSH and HTTPS: the benchmark's rounds are those answers,
# checked, through the same netem link.
NETEM_VM_LAB_TESTS = ("loss_rate or counters_account or "
                      "response_in_pieces or udp_and_icmp or "
                      # the lab's own TCP on a stock kernel (cubic built in, others modules):
                      # not cubic, the guest's own default, which a lab that set nothing has too
                      "(both_ends_use_the_profiles and not cubic)")
# Three of the study's modes (a wire tap's process per benchmark takes ~20 s to start under TCG:
# the eleven modes of asyncssh and httpx took 10 minutes through both backends, five 4): a new
# SSH connection (asyncssh fresh-conn), a new TLS connection and a kept one (httpx fresh-conn,
# keep-alive): a handshake of each protocol and requests on a warm connection, each held to the
# tun delay line's. The kept SSH connection, the PTY session and the batch modes (more of the
# same exchanges) are left to the host's tests: CI has 45 minutes.
NETEM_VM_BENCH = ("benchmarks/test_transport_modes.py", "--profiles", "regional",
                  "--clients", "asyncssh,httpx", "--commands", "5",
                  "--modes", "fresh-conn,keep-alive")
# Wire round trips: under emulation a run's speed decides races at the points of an iteration
# where both ends send without waiting for each other (SSH's banners and KEXINIT, a channel's close
# against the server's last output, asyncssh batch-exec's stdin EOF against the output of all five
# commands, a connection's close against the next one's SYN): one such crossing moves the count
# by one wire round trip at most. Clean runs differed by 0.6 in batch-exec (10.2 netem / 10.8 tun)
# and pty-fresh (19.2 / 19.8), a loaded one by 1.0 in httpx tls-resume; so every mode is held
# within 1.0 per iteration, except the three that are only requests and their answers on a warm
# connection (no such point): there both backends must agree within 0.5.
NETEM_VM_WIRE = ("--wire-tolerance", "1.0", "--allow", "keep-alive=0.5",
                 "--allow", "batch-post=0.5", "--allow", "multi-cmd=0.5")
NETEM_VM_TIMEOUT = "1800"  # seconds: the VM is stopped (and the session fails) after this
# Seconds a lab waits for each helper process there: a Python process that imports the emulator
# took 40-70 s to start under TCG on a busy 2-core machine, beyond the default 60.
NETEM_VM_START_TIMEOUT = "300"


@project_session
def netem(session: nox.Session) -> None:
    """The netem link backend, proven on Debian's stock kernel in a VM (root): installs qemu, the
    kernel package and virtme-ng if missing (``tools/netem_vm.py --install``), boots the kernel
    once under software emulation and runs in it: the lab tests that mean something there (the
    lab's own TCP among them: route congestion control on a stock kernel), and
    the transport benchmark (asyncssh and httpx in the study's core modes at regional, 5
    commands) with ``--link-backend netem``, the same benchmark through the tun delay line; then
    ``tools/compare_backends.py`` holds the two side by side (wire round trips per iteration
    within 1.0, 0.5 for requests on a warm connection; each lab's ICMP and TCP RTT, from the
    benchmarks' records: a ``mgmtbench lab check`` per backend cost 3 more minutes for the same
    two instruments). Fails if any step does. Results under .benchmarks/netem-vm/; about 10
    minutes on an otherwise idle 2-core machine.

    Extra arguments go to the netem pytest run (``nox -s netem -- -x``).
    """
    if os.geteuid() != 0:
        session.skip("the netem session needs root (it installs packages and boots a VM whose "
                     "lab network needs namespaces): run it with sudo")
    use_project(session)
    os.makedirs(NETEM_OUT, exist_ok=True)
    for old in Path(NETEM_OUT).glob("*.json"):  # a step that fails must not leave an old result
        old.unlink()
    out = {name: f"{NETEM_OUT}/{name}.json" for name in ("transport-netem", "transport-tun")}
    pytest = ["pytest", "-p", "no:cacheprovider", "--benchmark-columns=mean,median,min,max",
              "--durations=0"]
    steps = [
        [*pytest, "tests/test_lab.py", "tests/test_wiretap.py", "tests/test_lab_tcp.py",
         *NETEM_VM_BENCH,
         "--link-backend", "netem", "-k", f"{NETEM_VM_LAB_TESTS} or test_transport_mode",
         f"--benchmark-json={out['transport-netem']}", "-v", *session.posargs],
        [*pytest, *NETEM_VM_BENCH, "--link-backend", "tun",
         f"--benchmark-json={out['transport-tun']}"],
    ]
    steps.append(["python", "tools/compare_backends.py", out["transport-netem"],
                  out["transport-tun"], "--rtts-from-benchmarks", "--rtt-tolerance", "0.25",
                  *NETEM_VM_WIRE])
    # One boot for everything; every step runs even if an earlier one failed, the VM's exit code
    # says whether any did.
    script = "failed=0\nSTART=$(date +%s)\n" + "".join(
        f"echo {shlex.quote('== netem VM: ' + shlex.join(step))}; SECONDS=0; "
        f"{shlex.join(step)} || {{ failed=1; echo '== FAILED'; }}; "
        f"echo \"== took $SECONDS s\"\n" for step in steps) + (
        "echo \"== netem VM: all steps took $(( $(date +%s) - START )) s, "
        "$([ $failed = 0 ] && echo 'all passed' || echo 'some FAILED')\"\nexit $failed\n")
    session.run("python", "tools/netem_vm.py", "--install", "--timeout", NETEM_VM_TIMEOUT, "--",
                "bash", "-c", script, env={"MGMTBENCH_LAB_START_TIMEOUT": NETEM_VM_START_TIMEOUT})
