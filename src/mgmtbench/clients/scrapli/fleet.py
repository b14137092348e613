"""Scrapli at scale with its sync drivers: a driver per device in a thread pool (as nornir-scrapli
runs them), ``send_command`` twice on the kept session; the ``system`` (OpenSSH binary) and
``ssh2`` transports."""

from __future__ import annotations

from mgmtbench.clients.base import KEPT_SHELL
from mgmtbench.clients.fleet.adapted import AdaptedFleet
from mgmtbench.clients.scrapli.adapter import (
    ScrapliBinClient,
    ScrapliBinClientTuned,
    ScrapliSsh2Client,
    ScrapliSsh2ClientTuned,
)


class ScrapliBinFleet(AdaptedFleet):
    """scrapli (bin transport) fleet runner: a driver per device in a thread pool."""
    name = "scrapli-bin"
    how = "ThreadPoolExecutor, one IOSXEDriver (system transport) per device"
    adapter = ScrapliBinClient
    mode = KEPT_SHELL
    spawns = True  # the system transport runs an ssh process per device


class ScrapliSsh2Fleet(AdaptedFleet):
    """scrapli (ssh2 transport) fleet runner: a driver per device in a thread pool."""
    name = "scrapli-ssh2"
    how = "ThreadPoolExecutor, one IOSXEDriver (ssh2 transport) per device"
    adapter = ScrapliSsh2Client
    mode = KEPT_SHELL


class ScrapliBinFleetTuned(ScrapliBinFleet):
    """scrapli (bin transport) fleet runner with every knob that matters."""
    name = "scrapli-bin+tuned"
    adapter = ScrapliBinClientTuned


class ScrapliSsh2FleetTuned(ScrapliSsh2Fleet):
    """scrapli (ssh2 transport) fleet runner with every knob that matters."""
    name = "scrapli-ssh2+tuned"
    adapter = ScrapliSsh2ClientTuned
