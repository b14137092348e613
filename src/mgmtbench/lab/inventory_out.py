"""A running lab's devices as mgmtbench's native TOML inventory (``mgmtbench lab up
--inventory-out FILE``), so ``--inventory FILE`` and ``mgmtbench inventory check FILE`` reach them
as they would reach real devices.

The file names each device's address, ports and platform, the lab's user, CA file and
known_hosts. Credentials come from the environment, never from the file: the password is read
from ``MGMTBENCH_PASSWORD`` (or ``--ask-password``) as for any inventory
(:mod:`mgmtbench.targets.credentials`). With ``key_file`` (the private key of the lab's
``--authorized-keys``), SSH libraries still log in with the password (``auth = "password"``) and
the OpenSSH client, which logs in with keys only, uses the key.

The file is written whole (a temporary file renamed into place) and never replaces a file that
this module did not write (its first line says who wrote it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from mgmtbench.errors import UsageError
from mgmtbench.lab.facts import LabDevice

MARK = "# mgmtbench lab inventory"  # the first line of every file written here


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (JSON's escapes are TOML's for these)."""
    return json.dumps(value)


def lab_inventory(devices: Sequence[LabDevice], *, lab_id: str, profile: str, platform: str,
                  username: str, ca_file: Path | None, known_hosts: Path | None,
                  key_file: Path | None = None) -> str:
    """The TOML text of the inventory of ``devices`` (see the module docstring)."""
    lines = [f"{MARK} {lab_id}: profile {profile}, written by `mgmtbench lab up`;",
             "# valid while that lab is up. The password is never written here: export",
             "# MGMTBENCH_PASSWORD (the lab's --password) or use --ask-password.",
             "", "[defaults]", f"platform = {toml_string(platform)}",
             f"username = {toml_string(username)}", 'auth = "password"']
    for name, path in (("ca_file", ca_file), ("known_hosts", known_hosts),
                       ("key_file", key_file)):
        if path is not None:
            lines.append(f"{name} = {toml_string(str(Path(path).resolve()))}")
    if key_file is None:
        lines.append("# key_file = \"...\"  # for the OpenSSH client: the private key of the "
                     "lab's --authorized-keys")
    for device in devices:
        lines += ["", f"[hosts.{toml_string(device.hostname)}]",
                  f"host = {toml_string(device.address)}", f"ssh_port = {device.ssh_port}",
                  f"https_port = {device.https_port}",
                  f"netconf_port = {getattr(device, 'netconf_port', 830)}",
                  f"gnmi_port = {getattr(device, 'gnmi_port', 9339)}"]
        if getattr(device, "http3_port", None):
            lines.append(f"http3_port = {device.http3_port}")
    return "\n".join(lines) + "\n"


def private_key_for(authorized_keys: Path | None) -> Path | None:
    """The private key next to an ``authorized_keys`` file named ``KEY.pub`` (``KEY``), if it
    exists: what a user who passed their public key would log in with."""
    if authorized_keys is None or authorized_keys.suffix != ".pub":
        return None
    private = authorized_keys.with_suffix("")
    return private if private.is_file() else None


def check_inventory_path(path: Path) -> None:
    """Refuse (one line) a path ``--inventory-out`` must not write: a folder, a missing folder,
    or a file this module did not write. Called before the lab is built, and again to write."""
    try:
        if path.is_dir():
            raise UsageError(f"--inventory-out {path}: a folder; give a file name")
        if not path.parent.is_dir():
            raise UsageError(f"--inventory-out {path}: no folder {path.parent}")
        if path.exists():
            with path.open("rb") as existing:
                if not existing.read(len(MARK)).decode("utf-8", "replace") == MARK:
                    raise UsageError(f"--inventory-out {path}: the file exists and was not "
                                     "written by `mgmtbench lab up`; choose another name")
    except OSError as exc:
        raise UsageError(f"--inventory-out {path}: cannot use it "
                         f"({exc.strerror or exc})") from None


def write_inventory(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole (:func:`check_inventory_path` first)."""
    check_inventory_path(path)
    try:
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(text, encoding="utf-8")
            temporary.replace(path)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as exc:
        raise UsageError(f"--inventory-out {path}: cannot write it "
                         f"({exc.strerror or exc})") from None
