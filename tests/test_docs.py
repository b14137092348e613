"""The README and the documentation site stay true: a short README that still gives the two
commands (CI runs its test command), relative links that point at files, every page in the
site's nav, the plugin page's example the README's, and the generated plugin reference
(tools/docs_hooks.py) complete. ``./dev docs`` builds the site itself (mkdocs --strict)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: The two commands, verbatim: the test command is the one .ci/run runs.
TWO_COMMANDS = (
    "./dev tests         # the test suite (as root the lab tests run too)",
    "sudo ./dev bench    # the main job: every client x mode at local, regional, intercontinental, "
    "5 commands",
)


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


docs_hooks = load("docs_hooks")
examples = load("examples")


def pages() -> list[Path]:
    """Every Markdown page of the site (hidden folders aside: a half-written example)."""
    return sorted(p for p in DOCS.rglob("*.md")
                  if not any(part.startswith(".") for part in p.relative_to(DOCS).parts))


def without_code(text: str) -> str:
    """``text`` without fenced blocks and code spans (their brackets are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def relative_links(text: str) -> list[str]:
    """Every link target of Markdown (``[x](t)``, ``![x](t)``) and HTML (``src``, ``href``)
    that is a path, without its anchor."""
    text = without_code(text)
    found = re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)
    found += re.findall(r"""(?:src|href)=["']([^"']+)["']""", text)
    return [target.split("#", 1)[0] for target in found
            if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#")]


def test_readme_is_short_and_keeps_the_two_commands() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    section = text.split("## The two commands\n", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the README's two commands are missing"
    assert tuple(block.group(1).splitlines()) == TWO_COMMANDS
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert TWO_COMMANDS[0].split("#")[0].strip() in ci  # CI runs the README's test command


def test_every_relative_link_points_at_a_file() -> None:
    broken = []
    for page in [README, *pages()]:
        for target in relative_links(page.read_text()):
            if target and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken


def test_links_are_found_in_markdown_and_html_but_not_in_code() -> None:
    text = ('[a](x.md) ![b](img/c.png "title") [d](https://e.org) [f](#g) [h](i.md#j)\n'
            '<img src="k.png" width="9"> `[l](m.md)`\n```sh\n[n](o.md)\n```\n')
    assert relative_links(text) == ["x.md", "img/c.png", "i.md", "k.png"]


def nav_pages(nav: list[Any]) -> list[str]:
    found: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            found += nav_pages(value)
        else:
            found.append(str(value))
    return found


def test_every_page_is_in_the_nav_and_every_nav_entry_a_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["strict"] is True
    nav = nav_pages(docs_hooks.add_examples(config["nav"]))
    assert len(nav) == len(set(nav))
    assert sorted(nav) == sorted(p.relative_to(DOCS).as_posix() for p in pages())


def test_the_example_run_joins_the_results_section(tmp_path: Path) -> None:
    for date in ("2026-12-01", "2026-12-05"):
        (tmp_path / "examples" / date).mkdir(parents=True)
        (tmp_path / "examples" / date / "report.md").write_text("# report\n")
    (tmp_path / "examples" / "2026-12-05" / "README.md").write_text("# run\n")
    (tmp_path / "examples" / ".2026-12-06.x").mkdir()  # half-written: not listed
    nav = [{"Home": "index.md"},
           {"Results and reports": ["results.md", {"Example run, 2026-01-01": ["old.md"]},
                                    {"History": "h.md"}]}]
    assert docs_hooks.add_examples(nav, tmp_path)[1]["Results and reports"] == [
        "results.md",
        {"Example run, 2026-12-05": ["examples/2026-12-05/README.md",
                                     "examples/2026-12-05/report.md"]},
        {"Example run, 2026-12-01": ["examples/2026-12-01/report.md"]},
        {"History": "h.md"},
    ]


def code_block(text: str, after: str) -> str:
    found = re.search(r"```python\n(.*?)```", text.split(after, 1)[1], re.S)
    assert found
    return found.group(1)


def test_the_plugin_page_shows_the_readmes_example() -> None:
    page = (DOCS / "pytest-plugin.md").read_text()
    assert code_block(page, "# The pytest plugin") == code_block(README.read_text(),
                                                                  "## Your own benchmarks")
    assert docs_hooks.MARKER in page


def test_the_plugin_reference_lists_every_option_and_fixture() -> None:
    reference = docs_hooks.plugin_reference()
    declared = set()
    for source in (ROOT / "src" / "mgmtbench" / "testing").glob("*.py"):
        declared |= set(re.findall(r"addoption\(\s*\"(--[\w-]+)\"", source.read_text()))
    assert {"--profiles", "--proxy-profiles", "--dask-workers"} <= declared
    assert [option for option in sorted(declared) if f"`{option}" not in reference] == []
    from mgmtbench.testing import plugin

    for fixture in [*plugin.__all__, "edge_lab_for", "dask_cluster"]:
        assert f"| `{fixture}` |" in reference
    assert "| `lab_for` | session | " in reference


def test_the_example_pointers_are_where_the_example_tool_looks() -> None:
    for source in examples.POINTERS:
        text = (ROOT / source).read_text()
        assert text.count(examples.START) == text.count(examples.END) == 1, source
