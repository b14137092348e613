"""The gNMI protobuf messages and the gRPC service glue: pygnmi's compiled ``gnmi.proto``
(v0.8.0, with ``gnmi_ext.proto``), one copy for the server and every client in the process.

Why pygnmi's and not our own compilation: a second compiled ``gnmi.proto`` registers the same
``gnmi.*`` names in protobuf's default descriptor pool, and a process that serves the device and
runs pygnmi (every test, the local benchmarks) would fail to import one of the two. pygnmi's
generated code imports cleanly with the protobuf runtime locked here (7.x), it is BSD-3 licensed
(the ``.proto`` is OpenConfig's, Apache-2.0), and it carries no type information (neither would
``protoc``'s Python output without mypy-protobuf), so typed code sees ``Any`` at this boundary.
"""

from __future__ import annotations

from typing import Any

try:
    import grpc
    from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc
except ImportError:  # pragma: no cover - grpcio and pygnmi are dependencies
    grpc = None
    gnmi_pb2 = gnmi_pb2_grpc = None

__all__ = ["GNMI_VERSION", "grpc", "missing", "pb", "rpc"]

#: ``gnmi_pb2``: the messages (``GetRequest``, ``Notification``, ``TypedValue`` ...).
pb: Any = gnmi_pb2
#: ``gnmi_pb2_grpc``: ``gNMIStub``, ``gNMIServicer``, ``add_gNMIServicer_to_server``.
rpc: Any = gnmi_pb2_grpc
#: The gNMI version the messages are (``CapabilityResponse.gNMI_version``).
GNMI_VERSION = "0.8.0"


def missing() -> str | None:
    """A one-line reason gNMI cannot be served or spoken here, None if it can."""
    if grpc is None or gnmi_pb2 is None:
        return "gNMI needs grpcio and pygnmi: pip install mgmtbench"
    return None
