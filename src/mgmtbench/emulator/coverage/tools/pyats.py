"""pyATS: a testbed of one device, ``connect()`` with unicon's defaults (its own setup lines at
login), then ``parse()`` of the platform's everyday show commands with Genie; each parse counts
when it returns data."""

from __future__ import annotations

import contextlib
import logging

from mgmtbench.emulator.coverage import Outcome, Target
from mgmtbench.emulator.device.transcripts import load_platform

NAME = "pyats"
#: Platform -> pyATS's os.
PLATFORMS = {"cisco_ios": "iosxe", "cisco_asa": "asa", "arista_eos": "eos",
             "cisco_nxos": "nxos", "juniper_junos": "junos"}
SSH_OPTIONS = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"


def run(target: Target) -> list[Outcome]:
    """Connect, parse each everyday command, disconnect."""
    from pyats.topology import loader

    for name in ("unicon", "pyats", "genie"):
        logging.getLogger(name).setLevel(logging.ERROR)
    testbed = loader.load({"devices": {target.hostname: {
        "os": PLATFORMS[target.platform], "type": "router",
        "credentials": {"default": {"username": target.username,
                                    "password": target.password},
                        "enable": {"password": target.secret}},
        "connections": {"cli": {"protocol": "ssh", "ip": target.host,
                                "port": target.ssh_port, "ssh_options": SSH_OPTIONS}},
    }}})
    device = testbed.devices[target.hostname]
    try:
        device.connect(log_stdout=False, learn_hostname=True, connection_timeout=30)
    except Exception as exc:  # the failure to connect is the verdict
        return [Outcome("connect", False, _short(exc))]
    outcomes = [Outcome("connect", True)]
    try:
        for command in load_platform(target.platform).style.show_commands:
            try:
                parsed = device.parse(command)
            except Exception as exc:  # a parser's refusal is the verdict
                outcomes.append(Outcome(f"parse {command}", False, _short(exc)))
                continue
            outcomes.append(Outcome(f"parse {command}", bool(parsed)))
    finally:
        with contextlib.suppress(Exception):  # a broken session: nothing to report
            device.disconnect()
    return outcomes


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}"
