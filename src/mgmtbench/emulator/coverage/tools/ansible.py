"""Ansible (the ``ansible`` 11 package's collections), run by ``ansible-playbook`` over
``network_cli`` (paramiko; Junos's over ``netconf``, the only connection its facts module
takes): each platform's facts module with ``gather_subset: all`` (counts when it returns facts),
then its config module setting one line twice (counts when the first run changes the device and
the second changes nothing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mgmtbench.emulator.coverage import Outcome, Target

NAME = "ansible"
#: Platform -> its collection's network OS (the facts module is ``<os>_facts``).
PLATFORMS = {"cisco_ios": "cisco.ios.ios", "cisco_asa": "cisco.asa.asa",
             "arista_eos": "arista.eos.eos", "cisco_nxos": "cisco.nxos.nxos",
             "juniper_junos": "junipernetworks.junos.junos"}
#: Collections whose facts module takes another connection than ``network_cli``.
CONNECTIONS = {"junipernetworks.junos.junos": "ansible.netcommon.netconf"}
TIMEOUT = 300


def playbook_command() -> list[str]:
    """``ansible-playbook`` beside this Python (the same environment), else on PATH."""
    here = Path(sys.executable).with_name("ansible-playbook")
    found = str(here) if here.exists() else shutil.which("ansible-playbook")
    if found is None:
        raise RuntimeError("ansible-playbook is not installed: pip install 'ansible>=11,<12'")
    return [found]


def _inventory(target: Target) -> dict[str, object]:
    network_os = PLATFORMS[target.platform]
    connection = CONNECTIONS.get(network_os, "ansible.netcommon.network_cli")
    netconf = connection.endswith(".netconf")
    host = {
        "ansible_host": target.host,
        "ansible_port": target.netconf_port if netconf else target.ssh_port,
        "ansible_user": target.username, "ansible_password": target.password,
        "ansible_connection": connection,
        "ansible_network_os": network_os,
        "ansible_network_cli_ssh_type": "paramiko",
        "ansible_become": True, "ansible_become_method": "enable",
        "ansible_become_password": target.secret,
    }
    return {"all": {"hosts": {"dut": host}}}


#: A configuration line each platform takes (Junos: its ``set`` form), set by the config module
#: twice: the first run changes the device, the second must change nothing.
CONFIG_LINES = {"junipernetworks.junos.junos": "set snmp location coverage-rack"}
CONFIG_LINE = "snmp-server location coverage-rack"


def _playbook(target: Target) -> list[dict[str, object]]:
    network_os = PLATFORMS[target.platform]
    line = CONFIG_LINES.get(network_os, CONFIG_LINE)
    config = {f"{network_os}_config": {"lines": [line]}}
    return [{"hosts": "dut", "gather_facts": False, "tasks": [
        {"name": "facts", f"{network_os}_facts": {"gather_subset": ["all"]},
         "register": "facts", "ignore_errors": True},
        {"name": "config", **config, "register": "first", "ignore_errors": True},
        {"name": "config again", **config, "register": "second", "ignore_errors": True},
        {"name": "report", "ansible.builtin.copy": {
            "content": "{{ {'facts': facts, 'first': first, 'second': second} | to_json }}",
            "dest": "{{ playbook_dir }}/results.json"},
         "delegate_to": "localhost"},
    ]}]


def run(target: Target) -> list[Outcome]:
    """Run the playbook: the facts task (and how many facts it gathered), the config task, and
    the same config task again, which must change nothing."""
    work = Path(target.workdir)
    (work / "inventory.json").write_text(json.dumps(_inventory(target)))
    (work / "site.json").write_text(json.dumps(_playbook(target)))
    env = {**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_PERSISTENT_COMMAND_TIMEOUT": "60", "ANSIBLE_LOCAL_TEMP": str(work / "tmp"),
           "ANSIBLE_HOME": str(work / "home"), "ANSIBLE_PARAMIKO_LOOK_FOR_KEYS": "False"}
    done = subprocess.run([*playbook_command(), "-i", str(work / "inventory.json"),
                           str(work / "site.json")], env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    results = work / "results.json"
    if not results.exists():
        lines = [line for line in done.stdout.splitlines() if "fatal:" in line or "FAILED" in line]
        return [Outcome("playbook", False, " ".join(" ".join(lines).split())[:300])]
    found = json.loads(results.read_text())
    facts, first, second = found["facts"], found["first"], found["second"]
    gathered = facts.get("ansible_facts", {})
    return [
        Outcome("facts", not facts.get("failed") and bool(gathered),
                _why(facts) or f"{len(gathered)} facts"),
        Outcome("config", not first.get("failed") and bool(first.get("changed")),
                _why(first) or ("changed" if first.get("changed") else "nothing changed")),
        Outcome("config idempotent", not second.get("failed") and not second.get("changed"),
                _why(second) or ("changed again" if second.get("changed") else "unchanged")),
    ]


def _why(result: dict[str, object]) -> str:
    """A failed task's message, in one line."""
    if not result.get("failed"):
        return ""
    message = str(result.get("msg", "")) + " " + str(result.get("module_stderr", ""))
    return " ".join(message.split())[:300]
