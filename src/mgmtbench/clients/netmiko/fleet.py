"""Netmiko at scale: a ``ConnectHandler`` per device in a thread pool (what Nornir and most
Netmiko scripts do), ``send_command`` twice on the kept session."""

from __future__ import annotations

from mgmtbench.clients.base import KEPT_SHELL
from mgmtbench.clients.fleet.adapted import AdaptedFleet
from mgmtbench.clients.netmiko.adapter import NetmikoClient, NetmikoClientTuned


class NetmikoFleet(AdaptedFleet):
    """Netmiko fleet runner: ConnectHandlers in a thread pool."""
    name = "netmiko"
    how = "ThreadPoolExecutor, one ConnectHandler per device"
    adapter = NetmikoClient
    mode = KEPT_SHELL


class NetmikoFleetTuned(NetmikoFleet):
    """Netmiko fleet runner with every knob that matters (``netmiko+tuned``)."""
    name = "netmiko+tuned"
    adapter = NetmikoClientTuned
