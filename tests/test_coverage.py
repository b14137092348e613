"""``mgmtbench coverage``: NAPALM, Ansible and pyATS, unmodified, against served devices; what the
device heard from each (only what the client typed), what it answered, and what ntc-templates
and Genie parse of the answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mgmtbench.cli import main
from mgmtbench.emulator import CliSession, Device, DeviceFacts, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.coverage.measure import measure
from mgmtbench.emulator.coverage.parsers import parser
from mgmtbench.emulator.device.device import Heard


def test_the_device_hears_what_the_client_typed_not_what_commands_run_themselves() -> None:
    device = Device(load_platform("arista_eos"), DeviceFacts.for_hostname("leaf1"),
                    enable_secret="en")
    heard: list[Heard] = []
    device.heard = heard
    cli = CliSession(device, mode=Mode.PRIV)
    cli.execute("show ip interface")          # runs `show interfaces` itself
    cli.execute("show bogus")
    cli.execute("configure session s1")
    cli.execute("ntp server 198.19.255.9")
    cli.execute("end")
    cli.execute("configure session s1 commit")  # types the change in a session of its own
    assert [(h.mode, h.line, h.ok) for h in heard] == [
        ("privileged", "show ip interface", True), ("privileged", "show bogus", False),
        ("privileged", "configure session s1", True), ("config", "ntp server 198.19.255.9", True),
        ("config", "end", True), ("privileged", "configure session s1 commit", True)]
    assert heard[0].output.startswith("Ethernet1 is up")
    device.heard = None
    cli.execute("show version")
    assert len(heard) == 6


def test_parsers_say_parsed_refused_or_no_parser() -> None:
    clock = "*14:03:11.512 UTC Sun Nov 22 2026\n"
    for name in ("ntc", "genie"):
        assert parser(name).parses("cisco_ios", "show clock", clock) is True
        assert parser(name).parses("cisco_ios", "show clock", "garbage\n") is False
        assert parser(name).parses("cisco_ios", "show no-such-command", clock) is None


def test_napalm_on_eos_is_answered_and_counted() -> None:
    run = measure("napalm", "arista_eos")
    assert run.error == ""
    done = {o.name for o in run.outcomes if o.ok}
    assert {"open", "get_facts", "get_interfaces", "get_config", "get_arp_table"} <= done
    assert run.sent["show version | json"] is True  # eAPI runs `| json` as the CLI would
    assert run.answered == sum(run.sent.values())
    assert set(run.refused) == {line for line, ok in run.sent.items() if not ok}


@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_asa", "arista_eos", "cisco_nxos",
                                      "juniper_junos"])
def test_ansible_facts_and_an_idempotent_config_pass(platform: str) -> None:
    run = measure("ansible", platform)
    assert [(o.name, o.ok) for o in run.outcomes] == [
        ("facts", True), ("config", True), ("config idempotent", True)], run.outcomes
    assert run.sent  # the device heard it (NETCONF RPCs that run a command included)


@pytest.mark.parametrize("platform", ["cisco_ios", "arista_eos", "cisco_nxos", "juniper_junos"])
def test_napalm_opens_and_reads_facts_on_every_driver(platform: str) -> None:
    run = measure("napalm", platform)
    done = {o.name: o for o in run.outcomes}
    assert done["open"].ok, done["open"].detail
    assert done["get_facts"].ok, done["get_facts"].detail
    assert done["get_interfaces"].ok, done["get_interfaces"].detail


@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_nxos"])
def test_pyats_connects_with_its_defaults(platform: str) -> None:
    run = measure("pyats", platform)
    assert run.outcomes[0].name == "connect"
    assert run.outcomes[0].ok, run.outcomes[0].detail
    assert run.parsed["genie"][0] > 0


def test_the_command_prints_the_table_and_writes_json(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "coverage.json"
    assert main(["coverage", "--tools", "napalm", "--platforms", "cisco_ios",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "napalm" in printed
    assert "cisco_ios" in printed
    runs = json.loads(out.read_text())
    assert [(r["tool"], r["platform"], r["driver"]) for r in runs] == [("napalm", "cisco_ios",
                                                                        "ios")]


def test_unknown_tools_and_platforms_are_one_line_errors(capsys: pytest.CaptureFixture[str]) \
        -> None:
    assert main(["coverage", "--tools", "salt"]) == 2
    assert capsys.readouterr().err.strip() == (
        "mgmtbench: error: --tools salt: unknown (known: napalm, ansible, pyats)")
    assert main(["coverage", "--platforms", "vyos"]) == 2
    assert "--platforms vyos: unknown" in capsys.readouterr().err
