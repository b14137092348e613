"""containerlab: a lab's ``topology-data.json``, or what ``containerlab inspect --format json``
prints (a list of containers; ``{"containers": [...]}``; or, since 0.68, ``{"<lab>": [...]}``).

A node's address is its management address (``mgmt-ipv4-address``, ``ipv4_address`` without the
prefix length; IPv6 when it has no IPv4), its platform its ``kind`` (``cisco_c8000v``,
``cisco_iol`` ...), its groups its ``group`` and its ``kind``. containerlab has no ports or
credentials: SSH 22, HTTPS 443, credentials from the environment (:mod:`mgmtbench.targets.
credentials`). In ``topology-data.json`` a node's labels may carry mgmtbench's settings,
``mgmtbench-``-prefixed with dashes (``mgmtbench-platform: cisco_ios`` for a ``linux`` node
running an emulator, ``mgmtbench-https-port``, ``mgmtbench-ca-file`` ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mgmtbench.errors import UsageError
from mgmtbench.targets.inventory.base import SETTINGS, HostEntry, InventoryFormat, entry, settings
from mgmtbench.targets.inventory.bounded import load_json

LABELS = {"mgmtbench-" + name.replace("_", "-"): name for name in SETTINGS}


def _load(path: Path) -> Any:
    return load_json(path)


def _containers(data: Any) -> list[Any] | None:
    """The container list of ``containerlab inspect`` output, in any of its shapes."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("containers"), list):
        return list(data["containers"])
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        return [c for v in data.values() for c in v]
    return None


def _address(value: Any) -> str:
    text = str(value or "").split("/")[0].strip()
    return "" if text in ("N/A", "<nil>") else text


class Containerlab(InventoryFormat):
    """containerlab's topology data and inspect output."""

    name = "containerlab"
    description = "containerlab topology-data.json or `containerlab inspect --format json`"

    @classmethod
    def detect(cls, path: Path) -> bool:
        """A JSON file with containerlab's nodes or containers."""
        if not path.is_file() or path.suffix != ".json":
            return False
        data = _load(path)  # JSON that does not parse: say why, not "unknown format"
        if isinstance(data, dict) and isinstance(data.get("nodes"), dict):
            return True
        found = _containers(data)
        return bool(found) and all(isinstance(c, dict) and "kind" in c for c in found or [])

    def read(self, path: Path) -> list[HostEntry]:
        """Every node (topology data) or container (inspect output)."""
        data = _load(path)
        if isinstance(data, dict) and isinstance(data.get("nodes"), dict):
            return [self._node(str(n), node, path) for n, node in data["nodes"].items()]
        found = _containers(data)
        if found is None:
            raise UsageError(f"{path}: neither topology data (nodes) nor inspect output "
                             "(containers)")
        return [self._container(c, path) for c in found]

    def _node(self, name: str, node: Any, path: Path) -> HostEntry:
        where = f"{path}: node {name}"
        if not isinstance(node, dict):
            raise UsageError(f"{where}: expected a mapping")
        address = _address(node.get("mgmt-ipv4-address")) or _address(
            node.get("mgmt-ipv6-address"))
        if not address:
            raise UsageError(f"{where}: no management address (is the lab deployed?)")
        labels = node.get("labels")
        labels = labels if isinstance(labels, dict) else {}
        values: dict[str, Any] = {"platform": node.get("kind")}
        values.update(settings(labels, where=f"{where}: labels", base=path.parent, prefix=None,
                               names=LABELS))
        groups = tuple(str(g) for g in (node.get("group"), node.get("kind")) if g)
        return entry(name, address, {k: v for k, v in values.items() if v is not None}, groups)

    def _container(self, container: Any, path: Path) -> HostEntry:
        if not isinstance(container, dict):
            raise UsageError(f"{path}: a container entry must be a mapping")
        full = str(container.get("name") or "")
        lab = str(container.get("lab_name") or container.get("labName") or "")
        name = full.removeprefix(f"clab-{lab}-") if lab else full
        where = f"{path}: container {full or '?'}"
        address = _address(container.get("ipv4_address")) or _address(
            container.get("ipv6_address"))
        if not name or not address:
            raise UsageError(f"{where}: no name or management address (is the lab running?)")
        groups = tuple(str(g) for g in (container.get("group"), container.get("kind")) if g)
        return entry(name, address, {"platform": container.get("kind")}, groups)


FORMAT = Containerlab
