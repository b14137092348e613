"""``speed`` and ``duplex`` under an IOS interface: the values IOS takes, the running-config
lines, and ``show interfaces``' duplex/speed line and BW as IOS prints them for a router port
(``Full Duplex, 100Mbps, link type is force-up``) and a switch port (``Half-duplex, 10Mb/s``);
``no ...`` or ``... auto`` gives back the negotiated line. Parsed by ntc-templates and NAPALM
as by any client."""

from __future__ import annotations

from ntc_templates.parse import parse_output

from mgmtbench.emulator import CliSession, Device, DeviceFacts, load_platform
from mgmtbench.emulator.cli.session import Mode

ROUTER_PORT, SWITCH_PORT = "GigabitEthernet0/0/3", "GigabitEthernet0/1/0"


def session() -> CliSession:
    dev = Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"), enable_secret="x")
    return CliSession(dev, mode=Mode.PRIV)


def run(cli: CliSession, *lines: str) -> list[str]:
    return [cli.execute(line).text() for line in lines]


def interface(cli: CliSession, name: str) -> dict[str, str]:
    text = cli.execute(f"show interfaces {name}").text()
    records = parse_output(platform="cisco_ios", command="show interfaces", data=text)
    assert len(records) == 1
    return {key: str(value) for key, value in records[0].items()}


def test_speed_and_duplex_show_and_negation_restores() -> None:
    cli = session()
    before = {name: cli.execute(f"show interfaces {name}").text()
              for name in (ROUTER_PORT, SWITCH_PORT)}
    run(cli, "configure terminal", f"interface {ROUTER_PORT}", "speed 100", "duplex full",
        f"interface {SWITCH_PORT}", "speed 10", "duplex half", "end")
    router = cli.execute(f"show interfaces {ROUTER_PORT}").text()
    assert "  Full Duplex, 100Mbps, link type is force-up, media type is RJ45\n" in router
    assert "BW 100000 Kbit/sec" in router
    switch = cli.execute(f"show interfaces {SWITCH_PORT}").text()
    assert "  Half-duplex, 10Mb/s, media type is 10/100/1000BaseTX\n" in switch
    assert "BW 10000 Kbit/sec" in switch
    parsed = interface(cli, SWITCH_PORT)
    assert (parsed["duplex"], parsed["speed"], parsed["bandwidth"]) == \
        ("Half-duplex", "10Mb/s", "10000 Kbit")
    block = cli.execute(f"show running-config interface {ROUTER_PORT}").text()
    assert " negotiation auto\n speed 100\n duplex full\nend" in block

    run(cli, "configure terminal", f"interface {ROUTER_PORT}", "speed auto", "no duplex",
        f"interface {SWITCH_PORT}", "no speed", "duplex auto", "end")
    for name, text in before.items():
        assert cli.execute(f"show interfaces {name}").text() == text
    assert "Auto Duplex, Auto Speed, link type is auto" in before[ROUTER_PORT]  # a down port
    block = cli.execute(f"show running-config interface {ROUTER_PORT}").text()
    assert "speed" not in block
    assert "duplex" not in block


def test_values_ios_does_not_take_are_refused() -> None:
    cli = session()
    printed = run(cli, "configure terminal", f"interface {ROUTER_PORT}", "speed 1000000",
                  "duplex sideways", "speed", "end")
    assert "% Invalid input detected at '^' marker." in printed[2]
    assert "% Invalid input detected at '^' marker." in printed[3]
    assert printed[4] == "% Incomplete command.\n\n"
    assert "speed" not in cli.execute(f"show running-config interface {ROUTER_PORT}").text()
