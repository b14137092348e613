"""Inventory files read with bounded memory and time, whatever they hold.

An inventory is a user's file, but it may come from anywhere (a colleague, a generator, a
repository): a few hundred bytes of YAML aliases (a "billion laughs") stand for 10^9 values, and
an Ansible group tree of aliased groups makes ``width ** depth`` groups to walk; deep nesting
overflows a recursive parser, and a 5,000-digit number exceeds Python's integer conversion limit.
Everything here refuses such a file in one line (:class:`~mgmtbench.errors.UsageError` naming
it), the way YAML libraries that guard against it do (go-yaml's alias budget, SnakeYAML's
``maxAliasesForCollections`` and nesting depth):

- :data:`MAX_BYTES` of text at most (a 10,000-host inventory is a few MB);
- YAML: nesting :data:`MAX_DEPTH` deep at most, counted while the document is composed (before
  PyYAML's recursive composer can overflow), and at most :data:`MAX_NODES` values once every
  alias is counted as the copy it stands for (computed on the composed graph, shared nodes once:
  linear in the file);
- JSON and TOML: too deep or too long a number is one line, not a traceback.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from mgmtbench.errors import UsageError

MAX_BYTES = 32 << 20  # characters of an inventory file
MAX_DEPTH = 64  # nested mappings and lists in a YAML document
MAX_NODES = 1_000_000  # values of a YAML document, aliases expanded


def read_text(path: Path) -> str:
    """The text of ``path``: at most :data:`MAX_BYTES`; one line for anything else."""
    try:
        with path.open(encoding="utf-8") as file:
            text = file.read(MAX_BYTES + 1)
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not an inventory (not UTF-8 text)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the inventory ({exc.strerror or exc})") from None
    if len(text) > MAX_BYTES:
        raise UsageError(f"{path}: more than {MAX_BYTES >> 20} MB: not an inventory mgmtbench reads")
    return text


def load_json(path: Path) -> Any:
    """The JSON document at ``path``, bounded (see the module's docstring)."""
    text = read_text(path)
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError(f"{path}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # JSONDecodeError, and a number past Python's digit limit
        raise UsageError(f"{path}: not valid JSON ({_short(exc)})") from None


def load_toml(path: Path) -> dict[str, Any]:
    """The TOML document at ``path``, bounded (see the module's docstring)."""
    text = read_text(path)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise UsageError(f"{path}: not valid TOML (nested too deeply)") from None
    except ValueError as exc:  # TOMLDecodeError, and a number past Python's digit limit
        raise UsageError(f"{path}: not valid TOML ({_short(exc)})") from None


def load_yaml(path: Path) -> Any:
    """The YAML document at ``path`` (PyYAML's safe loader), bounded in depth and in values
    with aliases expanded; one line for a file that cannot be read, parsed or is too big."""
    import yaml

    text = read_text(path)
    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node)
        if size > MAX_NODES:
            raise UsageError(f"{path}: its YAML aliases expand to more than {MAX_NODES:,} values "
                             "(a \"billion laughs\"?): not an inventory mgmtbench reads")
        return loader.construct_document(node)
    except _TooDeep:
        raise UsageError(f"{path}: YAML nested more than {MAX_DEPTH} deep: not an inventory "
                         "mgmtbench reads") from None
    except yaml.YAMLError as exc:
        if "!vault" in str(exc):
            raise UsageError(f"{path}: vault-encrypted values cannot be read: leave the password "
                             "out and export MGMTBENCH_PASSWORD") from None
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise UsageError(f"{path}: not valid YAML{at}: {getattr(exc, 'problem', None) or exc}") \
            from None
    except ValueError as exc:  # a number past Python's digit limit
        raise UsageError(f"{path}: not valid YAML ({_short(exc)})") from None
    finally:
        loader.dispose()


class _TooDeep(Exception):
    """A YAML document nests past :data:`MAX_DEPTH`."""


def _loader_class() -> Any:
    """PyYAML's safe loader (the pure-Python one ``yaml.safe_load`` uses), composing no deeper
    than :data:`MAX_DEPTH`: its composer recurses once per level, so the depth is counted where
    it recurses, before Python's own limit is met."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types here
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise _TooDeep
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def _expanded_size(root: Any) -> int:
    """How many values the node graph under ``root`` holds with every alias copied out: each
    shared node's size is computed once (iteratively, children before parents), so linear in
    the graph; counting stops past :data:`MAX_NODES`."""
    import yaml

    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        children = ([c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode)
                    else list(node.value))
        if done:
            sizes[id(node)] = min(MAX_NODES + 1, 1 + sum(sizes[id(c)] for c in children))
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def _short(exc: BaseException) -> str:
    """An exception's message, cut to one short line."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 120 else text[:117] + "..."
