"""The import graph of ``src/mgmtbench``: no circles, and the emulator's device knows no protocol.

The graph is read from the source with :mod:`ast`, not from an interpreter: every ``import`` and
``from ... import`` counts wherever it is (module level, inside a function, under
``TYPE_CHECKING``), relative imports are resolved, and ``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``. The packages a module's own name passes
through (``mgmtbench.emulator`` for ``mgmtbench.emulator.device.clock``) are not edges: Python
loads them for every import below them, whoever imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from itertools import pairwise
from pathlib import Path

import mgmtbench

#: module -> {imported module: line of the first import}
Graph = dict[str, dict[str, int]]

DEVICE = "mgmtbench.emulator.device"
PROTOCOLS = ("mgmtbench.emulator.cli", "mgmtbench.emulator.ssh", "mgmtbench.emulator.https",
             "mgmtbench.emulator.netconf", "mgmtbench.emulator.gnmi")


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module under the package folder ``root``: dotted name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        found[".".join(parts)] = (path, package)
    return found


def _known(name: str, known: Mapping[str, object]) -> str | None:
    """``name`` or the longest of its prefixes that is a module here."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, package: bool, known: Mapping[str, object]) -> dict[str, int]:
    """The modules (of ``known``) that module ``name`` imports, each with its first line."""
    here = name if package else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known else origin
                       for alias in node.names]
        else:
            continue
        for target in targets:
            module = _known(target, known)
            if module is not None and module != name:
                found.setdefault(module, node.lineno)
    return found


def import_graph(root: Path) -> Graph:
    """The import graph of the package folder ``root``."""
    known = modules(root)
    return {name: imports(name, path, package, known) for name, (path, package) in known.items()}


def strongly_connected(graph: Graph) -> list[list[str]]:
    """The graph's strongly connected parts of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep graph cannot exhaust the recursion limit.
        work: list[tuple[str, Iterator[str]]] = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        part.append(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        parts.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return parts


def path(graph: Graph, start: str, goals: Iterable[str], within: Iterable[str] | None = None,
         ) -> list[str] | None:
    """The shortest import path from ``start`` to one of ``goals`` (at least one step), through
    ``within`` only if given; None if there is none."""
    allowed = set(within) if within is not None else None
    wanted = set(goals)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph[node]):
                if allowed is not None and target not in allowed:
                    continue
                if target in wanted:
                    steps = [target, node]
                    while steps[-1] != start:
                        steps.append(came[steps[-1]])
                    return steps[::-1]
                if target not in came and target != start:
                    came[target] = node
                    following.append(target)
        frontier = following
    return None


def shown(graph: Graph, steps: list[str]) -> str:
    """``a -> b (line 3) -> c (line 12)``."""
    return steps[0] + "".join(f"\n    -> {b}  (line {graph[a][b]} of {a})"
                              for a, b in pairwise(steps))


def circles(graph: Graph) -> list[str]:
    """Per strongly connected part: its modules and its shortest circle through the first."""
    return [f"{', '.join(part)}; one circle: "
            + shown(graph, path(graph, part[0], [part[0]], part) or part)
            for part in strongly_connected(graph)]


def test_the_package_imports_no_circle() -> None:
    graph = import_graph(Path(mgmtbench.__file__).parent)
    assert len(graph) > 100
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(found)


def test_the_device_imports_no_protocol() -> None:
    """Nothing the emulator's device imports, directly or through other modules, is of the CLI,
    SSH or HTTPS packages: protocols build on the device, never the reverse."""
    graph = import_graph(Path(mgmtbench.__file__).parent)
    device = [m for m in graph if m == DEVICE or m.startswith(DEVICE + ".")]
    assert f"{DEVICE}.device" in device, f"no {DEVICE} package"
    protocol = [m for m in graph if any(m == p or m.startswith(p + ".") for p in PROTOCOLS)]
    assert protocol
    reached = [steps for module in device if (steps := path(graph, module, protocol))]
    assert not reached, "the device imports a protocol:\n" + "\n".join(
        shown(graph, steps) for steps in reached)


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Function-level, relative, ``from package import module`` and ``TYPE_CHECKING`` imports
    are all edges; a package's own ancestors are not."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.a import A\n",
        "a.py": "A = 1\ndef f() -> None:\n    from . import b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "from ..a import A\nimport pkg.sub\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    graph = import_graph(root)
    assert graph == {"pkg": {"pkg.a": 1}, "pkg.a": {"pkg.b": 3}, "pkg.b": {"pkg.sub.c": 3},
                     "pkg.sub": {}, "pkg.sub.c": {"pkg.a": 1, "pkg.sub": 2}}
    assert strongly_connected(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert circles(graph) == ["pkg.a, pkg.b, pkg.sub.c; one circle: pkg.a\n"
                              "    -> pkg.b  (line 3 of pkg.a)\n"
                              "    -> pkg.sub.c  (line 3 of pkg.b)\n"
                              "    -> pkg.a  (line 1 of pkg.sub.c)"]
    assert path(graph, "pkg.sub", ["pkg.a"]) is None
