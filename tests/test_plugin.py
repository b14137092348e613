"""The pytest plugin as a user meets it: the README's example benchmark, copied from the README
itself, run by pytest in a fresh directory with nothing but the installed plugin."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example() -> str:
    """The python block under the README's "Your own benchmarks" heading."""
    text = README.read_text()
    section = text.split("## Your own benchmarks", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "the README's example benchmark is missing"
    return found.group(1)


@pytest.fixture(autouse=True)
def _not_an_xdist_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest run inside is the user's own: it must not take the variables of the xdist
    worker this suite may run in (pytest-benchmark then saves nothing)."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


def test_readme_example_runs_with_the_plugin_alone(pytester: pytest.Pytester) -> None:
    example = readme_example()
    assert len(example.splitlines()) <= 20
    pytester.makepyfile(test_my_benchmark=example)
    out = pytester.path / "out.json"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--profiles", "local",
                                           f"--benchmark-json={out}")
    result.assert_outcomes(passed=1)
    [bench] = json.loads(out.read_text())["benchmarks"]
    info = bench["extra_info"]
    assert bench["name"] == "test_show_version[local]"
    assert info["experiment"] == "my-show-version"
    assert info["backend"] in ("loopback", "none", "tun", "netem")
    assert info["measured_rtt_ms"] is not None
    assert info["rtt_error_ms"] == round(info["measured_rtt_ms"] - info["configured_rtt_ms"], 3)
    assert "asyncssh" in info["versions"]


def test_bad_option_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x(profile):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--profiles", "regionl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--profiles*regionl*"])
    assert "Traceback" not in result.stderr.str()
