"""Developer and CI sessions: ``nox -s bench`` (the main job), ``nox -s tests``, ``nox -s lint``,
``nox -s typecheck``.

Sessions install the project with the extras they need into their own virtualenv; extra
arguments go to the tool (``nox -s tests -- -k netmiko``).
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite: real emulators, real sockets, real OpenSSH and curl."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """The default matrix: every client x its modes, at local, regional and intercontinental,
    5 commands, against the embedded emulator in a lab. Saves JSON under .benchmarks/.

    Extra arguments go to pytest: ``nox -s bench -- -k regional``,
    ``nox -s bench -- --commands 1,5,10,25,50 --profiles all``.
    """
    session.install("-e", ".[test]")
    session.run(
        "pytest", "benchmarks/test_transport_modes.py", "-p", "no:cacheprovider",
        "--benchmark-autosave", "--benchmark-storage=file://.benchmarks",
        "--benchmark-columns=mean,median,min,max,stddev", "--benchmark-sort=mean",
        "-o", "console_output_style=count", "-v", *session.posargs,
    )


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", "src", "tests", "benchmarks", "conftest.py", "noxfile.py")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".[typecheck]")
    session.run("mypy", *session.posargs)
