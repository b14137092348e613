"""mkdocs hooks of the documentation site (``hooks:`` in mkdocs.yml), run by ``./dev docs``.

- The example run's pages (``docs/examples/<date>/``, written by ``./dev examples``) are added to
  the navigation under "Results and reports", whatever their date: mkdocs.yml names no date.
- ``<!-- plugin-reference -->`` in a page becomes the pytest plugin's options (every
  ``addoption`` of :func:`mgmtbench.testing.plugin.pytest_addoption`, by group) and fixtures
  (their docstrings), read from the code at build time, so the page cannot fall behind it.

No mkdocs import: the hooks get and return plain values (mkdocs' config maps and strings).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent / "docs"
#: The nav section the example run is listed under, and the page it follows.
RESULTS_SECTION = "Results and reports"
MARKER = "<!-- plugin-reference -->"


def example_nav(docs: Path = DOCS) -> list[dict[str, Any]]:
    """A nav entry per example folder (its README and report), newest first."""
    entries: list[dict[str, Any]] = []
    for folder in sorted((docs / "examples").glob("*/"), reverse=True):
        pages = [f"examples/{folder.name}/{name}" for name in ("README.md", "report.md")
                 if (folder / name).is_file()]
        if pages and not folder.name.startswith("."):
            entries.append({f"Example run, {folder.name}": pages})
    return entries


def add_examples(nav: list[Any], docs: Path = DOCS) -> list[Any]:
    """``nav`` with :func:`example_nav` appended to the section titled ``RESULTS_SECTION``."""
    for item in nav:
        if isinstance(item, dict) and isinstance(item.get(RESULTS_SECTION), list):
            section = [entry for entry in item[RESULTS_SECTION]
                       if not (isinstance(entry, dict)
                               and any(str(key).startswith("Example run, ") for key in entry))]
            item[RESULTS_SECTION] = section[:1] + example_nav(docs) + section[1:]
            return nav
    raise ValueError(f"mkdocs.yml's nav has no {RESULTS_SECTION!r} section for the example run")


@dataclass
class _Group:
    """One ``parser.getgroup`` of the plugin, as recorded."""

    name: str
    description: str
    options: list[tuple[tuple[str, ...], dict[str, Any]]] = field(default_factory=list)

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append((names, attrs))


@dataclass
class _Parser:
    """Stands in for pytest's parser: records the groups and options the plugin adds."""

    groups: dict[str, _Group] = field(default_factory=dict)

    def getgroup(self, name: str, description: str = "", after: str | None = None) -> _Group:
        return self.groups.setdefault(name, _Group(name, description))

    def addini(self, *args: Any, **kwargs: Any) -> None:
        """The plugin declares no ini settings today; one would be listed with the options."""
        raise NotImplementedError("document ini settings in tools/docs_hooks.py")


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(attrs: dict[str, Any]) -> str:
    if attrs.get("action") in ("store_true", "store_false"):
        return "off" if attrs["action"] == "store_true" else "on"
    default = attrs.get("default")
    return "" if default is None else f"`{_cell(default)}`"


def options_markdown(add_options: Callable[[Any], None]) -> str:
    """A table per option group, from the plugin's own ``pytest_addoption``."""
    parser = _Parser()
    add_options(parser)
    parts = []
    for group in parser.groups.values():
        rows = ["| option | default | what it does |", "|---|---|---|"]
        for names, attrs in group.options:
            choices = attrs.get("choices")
            text = _cell(attrs.get("help", ""))
            if choices and not all(str(choice) in text for choice in choices):
                text += f" (one of {', '.join(f'`{c}`' for c in choices)})"
            metavar = f" {attrs['metavar']}" if attrs.get("metavar") else ""
            rows.append(f"| `{'`, `'.join(names)}{metavar}` | {_default(attrs)} | {text} |")
        parts.append(f"### {group.description or group.name}\n\n" + "\n".join(rows))
    return "\n\n".join(parts)


def _fixtures(module: Any) -> list[tuple[str, Any]]:
    """The pytest fixtures a plugin module exposes, by name."""
    found = []
    for name, value in vars(module).items():
        marker = getattr(value, "_fixture_function_marker", None)
        if marker is not None and not name.startswith("_"):
            found.append((name, value))
    return sorted(found)


def fixtures_markdown(module: Any) -> str:
    """Each fixture of ``module`` with its scope and docstring."""
    rows = ["| fixture | scope | what it gives |", "|---|---|---|"]
    for name, fixture in _fixtures(module):
        scope = getattr(fixture._fixture_function_marker, "scope", "function")
        doc = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", inspect.cleandoc(fixture.__doc__ or ""))
        rows.append(f"| `{name}` | {scope} | {_cell(doc)} |")
    return "\n".join(rows)


def plugin_reference() -> str:
    """The Markdown that replaces :data:`MARKER`: options, then fixtures."""
    from mgmtbench.testing import plugin

    return ("## Options\n\n"
            "Every option of the plugin, as `pytest --help` lists them (generated from "
            "`mgmtbench.testing.plugin.pytest_addoption` when the site is built).\n\n"
            f"{options_markdown(plugin.pytest_addoption)}\n\n"
            "## Fixtures\n\n"
            "Every fixture the plugin provides (generated from their docstrings in "
            "`mgmtbench.testing.fixtures`, `edge` and `scaleout`).\n\n"
            f"{fixtures_markdown(plugin)}\n")


def on_config(config: Any) -> Any:
    """mkdocs: list the example run in the nav."""
    config["nav"] = add_examples(config["nav"], Path(config["docs_dir"]))
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """mkdocs: put the plugin's generated reference where a page asks for it."""
    if MARKER in markdown:
        return markdown.replace(MARKER, plugin_reference())
    return markdown
