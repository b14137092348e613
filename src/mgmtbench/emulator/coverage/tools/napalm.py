"""NAPALM: every getter of the platform's driver (``ios``, ``eos`` over eAPI, ``nxos_ssh``,
``junos`` over NETCONF), ``ping`` and ``traceroute``; a getter counts when it returns data
without an error."""

from __future__ import annotations

import contextlib
import ssl
from typing import Any

from mgmtbench.emulator.coverage import Outcome, Target

NAME = "napalm"
PLATFORMS = {"cisco_ios": "ios", "arista_eos": "eos", "cisco_nxos": "nxos_ssh",
             "juniper_junos": "junos"}
#: The getters and their arguments (a destination the device's routes cover).
GETTERS: dict[str, dict[str, Any]] = {
    "get_facts": {}, "get_interfaces": {}, "get_interfaces_ip": {},
    "get_interfaces_counters": {}, "get_lldp_neighbors": {}, "get_lldp_neighbors_detail": {},
    "get_arp_table": {}, "get_mac_address_table": {}, "get_config": {}, "get_users": {},
    "get_ntp_servers": {}, "get_ntp_stats": {}, "get_snmp_information": {},
    "get_environment": {}, "get_bgp_neighbors": {}, "get_bgp_config": {},
    "get_network_instances": {}, "get_vlans": {}, "get_optics": {},
    "get_route_to": {"destination": "198.19.2.0/24"},
    "ping": {"destination": "198.19.1.2"}, "traceroute": {"destination": "198.19.1.2"},
}


#: Drivers that speak the platform's HTTPS API (eos: eAPI, its default transport).
HTTPS_DRIVERS = frozenset({"eos"})


def _optional_args(target: Target) -> dict[str, Any]:
    if PLATFORMS[target.platform] in HTTPS_DRIVERS:
        context = ssl.create_default_context(cafile=target.ca_file)
        return {"port": target.https_port, "transport": "https", "context": context}
    return {"port": target.ssh_port, "secret": target.secret}


def run(target: Target) -> list[Outcome]:
    """Open the driver, call every getter, close it."""
    from napalm import get_network_driver

    driver = get_network_driver(PLATFORMS[target.platform])(
        target.host, target.username, target.password, timeout=30,
        optional_args=_optional_args(target))
    try:
        driver.open()
    except Exception as exc:  # any failure to open is the verdict
        return [Outcome("open", False, _short(exc))]
    outcomes = [Outcome("open", True)]
    try:
        for name, arguments in GETTERS.items():
            try:
                value = getattr(driver, name)(**arguments)
            except Exception as exc:  # the getter's failure is the verdict
                outcomes.append(Outcome(name, False, _short(exc)))
                continue
            outcomes.append(Outcome(name, bool(value), "" if value else "empty"))
    finally:
        with contextlib.suppress(Exception):  # closing a broken session: nothing to report
            driver.close()
    return outcomes


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}"
