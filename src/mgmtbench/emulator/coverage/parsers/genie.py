"""Genie (pyATS): the parser for the platform's os and the command, if there is one."""

from __future__ import annotations

from typing import Any

NAME = "genie"
#: Platform -> Genie's os.
OS = {"cisco_ios": "iosxe", "cisco_asa": "asa", "arista_eos": "eos", "cisco_nxos": "nxos",
      "juniper_junos": "junos"}
_DEVICES: dict[str, Any] = {}


def _device(platform: str) -> Any:
    if platform not in _DEVICES:
        from genie.conf.base import Device

        device = Device(f"coverage-{platform}", os=OS[platform])
        device.custom.setdefault("abstraction", {})["order"] = ["os"]
        _DEVICES[platform] = device
    return _DEVICES[platform]


def parses(platform: str, command: str, text: str) -> bool | None:
    """Whether Genie's parser turns ``text`` into data (None: no parser for the command)."""
    if platform not in OS:
        return None
    try:
        value = _device(platform).parse(command, output=text)
    except Exception as exc:  # no parser, or the parser rejects the text
        name = type(exc).__name__
        return None if name in ("ParserNotFound", "ModuleNotFoundError") or \
            "Could not find parser" in str(exc) else False
    return bool(value)
