"""The documentation's example run, regenerated from a real run: ``sudo ./dev examples``.

``nox -s examples`` runs the default benchmark (``./dev bench``'s job) into one JSON file, then
this script makes the example of it::

    python tools/examples.py RUN.json --commit abc1234 [--arguments "-k regional"]

It writes ``docs/examples/<date>/`` (the run's date, UTC, from the JSON) whole or not at all:
the run as ``run.json``, ``mgmtbench report`` of it (``report.md`` and whatever else it writes)
and a ``README.md`` whose line under its title names the date and the commit. The example folder before
it is removed (git keeps it), and the lines that point at "the example" (between
``<!-- example`` and ``<!-- /example -->`` in README.md and docs/results.md) are rewritten to
point at the new one. The site's navigation lists every ``docs/examples/*/`` by itself
(tools/docs_hooks.py).

Without ``--commit`` the commit is the one the run recorded (pytest-benchmark's
``commit_info``), so a saved run can be made the example too; "with uncommitted changes" is
added where the run recorded its work tree as dirty.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Where the example lives, relative to the repository.
EXAMPLES = Path("docs/examples")
#: The files whose "example" lines point at it, relative to the repository.
POINTERS = (Path("README.md"), Path("docs/results.md"))
START = "<!-- example: rewritten by ./dev examples (tools/examples.py) -->"
END = "<!-- /example -->"
_BLOCK = re.compile(re.escape(START) + r"\n.*?\n" + re.escape(END), re.S)
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}")


class ExampleError(Exception):
    """A run that cannot be made the example, or a repository without the pointer lines."""


@dataclass(frozen=True)
class Example:
    """What the example's README line says about the run."""

    date: str  # YYYY-MM-DD, UTC
    commit: str  # short hash
    dirty: bool  # the work tree had uncommitted changes
    cores: int | None  # the machine's CPU count, where the run recorded it
    arguments: str = ""  # extra pytest arguments given to ./dev examples

    def describe(self) -> str:
        """The run in one phrase: command, date, commit, machine."""
        job = "`./dev bench`'s job" + (f" with `{self.arguments}`" if self.arguments else "")
        commit = f"commit {self.commit}" + (" with uncommitted changes" if self.dirty else "")
        machine = f", {self.cores}-core machine" if self.cores else ""
        return f"{job}, run on {self.date} at {commit}{machine}"


def facts(run: dict[str, Any], commit: str | None = None, arguments: str = "") -> Example:
    """The example's facts from a pytest-benchmark run (``commit`` overrides the recorded one)."""
    try:
        when = datetime.fromisoformat(run["datetime"]).astimezone(UTC)
    except (KeyError, TypeError, ValueError) as exc:
        raise ExampleError("the run has no pytest-benchmark 'datetime': not a saved run?") from exc
    info = run.get("commit_info") or {}
    recorded = "" if info.get("id") in (None, "unversioned") else str(info["id"])[:7]
    if not (commit or recorded):
        raise ExampleError("no commit: give --commit (git rev-parse --short HEAD)")
    cpu = (run.get("machine_info") or {}).get("cpu") or {}
    cores = cpu.get("count") if isinstance(cpu.get("count"), int) else None
    return Example(date=when.strftime("%Y-%m-%d"), commit=commit or recorded,
                   dirty=bool(info.get("dirty")), cores=cores,
                   arguments=arguments)


def folder_readme(example: Example, html: bool = False) -> str:
    """docs/examples/<date>/README.md: the line naming the date and the commit, then the files
    (``html``: the report wrote report.html too)."""
    return (
        f"# Example run of {example.date}\n\n"
        f"{example.describe()}.\n\n"
        "- [report.md](report.md): `mgmtbench report run.json`"
        + (" (and `report.html`, the same in one file)" if html else "") + "\n"
        "- [run.json](run.json): the run, pytest-benchmark JSON\n\n"
        "Written by `sudo ./dev examples` (`tools/examples.py`), which replaces this folder "
        "with a new run's; older examples are in the repository's history.\n"
    )


def pointer(example: Example, source: Path) -> str:
    """The "example" line of ``source`` (relative to the repository), linking the new folder."""
    target = Path(os.path.relpath(EXAMPLES / example.date / "report.md", source.parent))
    return (f"The example: [the report]({target.as_posix()}) of {example.describe()}, "
            "written by `sudo ./dev examples`.")


def repoint(text: str, line: str, source: Path) -> str:
    """``text`` with its example block holding ``line``; one block, or :class:`ExampleError`."""
    if len(_BLOCK.findall(text)) != 1:
        raise ExampleError(f"{source} needs exactly one block from {START!r} to {END!r}")
    return _BLOCK.sub(lambda _: f"{START}\n{line}\n{END}", text)


def mgmtbench_report(run: Path, out: Path) -> None:
    """``mgmtbench report RUN --out OUT``, with this interpreter's mgmtbench."""
    subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", str(run), "--out", str(out)],
                   check=True)


def write_example(run: Path, root: Path = ROOT, commit: str | None = None,
                  arguments: str = "") -> Path:
    """Make ``run`` the example: its folder written whole, the old one gone, pointers moved.
    Returns the new folder."""
    try:
        data = json.loads(run.read_text())
    except (OSError, ValueError) as exc:
        raise ExampleError(f"{run}: cannot read the run ({exc})") from exc
    if not isinstance(data, dict) or not data.get("benchmarks"):
        raise ExampleError(f"{run}: no benchmarks in it (did every test skip?)")
    example = facts(data, commit, arguments)
    pointers = {source: repoint((root / source).read_text(), pointer(example, source), source)
                for source in POINTERS}  # every pointer checked before anything is written
    examples = root / EXAMPLES
    examples.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{example.date}.", dir=examples))
    try:
        shutil.copyfile(run, staging / "run.json")
        with tempfile.TemporaryDirectory() as scratch:
            report = Path(scratch) / "report"
            mgmtbench_report(staging / "run.json", report)
            for made in report.iterdir():
                shutil.move(made, staging / made.name)
        html = (staging / "report.html").is_file()
        (staging / "README.md").write_text(folder_readme(example, html))
        staging.chmod(0o755)
        for old in examples.iterdir():
            if old.is_dir() and _DATED.fullmatch(old.name):
                shutil.rmtree(old)
        folder = examples / example.date
        staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    for source, text in pointers.items():
        (root / source).write_text(text)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the run's pytest-benchmark JSON")
    parser.add_argument("--commit", default=None,
                        help="the commit it ran at (default: the one the run recorded)")
    parser.add_argument("--arguments", default="",
                        help="the extra pytest arguments it ran with, named in its README line")
    args = parser.parse_args(argv)
    try:
        folder = write_example(args.run, commit=args.commit, arguments=args.arguments)
    except ExampleError as exc:
        print(f"examples: {exc}", file=sys.stderr)
        return 2
    print(f"examples: wrote {folder.relative_to(ROOT)}; review and commit it with the pointers "
          f"({', '.join(str(p) for p in POINTERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
