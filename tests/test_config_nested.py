"""Configuration blocks nested two levels deep (:mod:`mgmtbench.emulator.cli.configgrammar`): IOS's
``router bgp`` -> ``address-family`` and ``vrf definition`` -> ``address-family``, the ASA's
``policy-map`` -> ``class`` and ``policy-map type inspect`` -> ``parameters``. Their prompts and
``exit`` levels in a real SSH shell; negation; a configuration file read back (``copy ...
running-config``, ``configure replace``) landing each line under its own parent, over the SSH
shell and over HTTPS; the archive's diffs of nested lines; the ASA's object NAT section."""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Callable
from urllib.parse import quote

import pytest

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.fileops import running_text, write_file
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import SECRET
from mgmtbench.testing.shell import PROMPT, Shell, configure, https_client, ssh_connect

FreshEmulator = Callable[..., EmulatorThread]
QUESTION_OR_PROMPT = re.compile(rb"(\]\? ?$)|" + PROMPT.pattern)
RUNNING = ("show", "running-config")
# Save the running configuration to a file and read it back, without questions.
ROUND_TRIP = {
    "cisco_ios": ["copy running-config flash:nested.cfg", "copy flash:nested.cfg running-config"],
    "cisco_asa": ["copy /noconfirm running-config disk0:/nested.cfg",
                  "copy /noconfirm disk0:/nested.cfg running-config"],
}
AF_IPV4 = """\
 address-family ipv4
  network 203.0.113.128 mask 255.255.255.128
  neighbor 198.51.100.5 activate
  neighbor 198.51.100.5 prefix-list PL-OUR-PREFIXES out
  neighbor 198.51.100.5 route-map RM-ISP-B-IN in
  neighbor 198.51.100.5 route-map RM-ISP-B-OUT out
  neighbor 203.0.113.9 activate
  neighbor 203.0.113.9 prefix-list PL-OUR-PREFIXES out
  neighbor 203.0.113.9 route-map RM-ISP-A-IN in
 exit-address-family
"""


def device(platform: str) -> Device:
    return Device(load_platform(platform), DeviceFacts.for_hostname("R1"), enable_secret="x")


def typed(dev: Device, lines: list[str]) -> list[tuple[str, str]]:
    """Each line typed in configuration mode: the prompt after it and what the device printed."""
    cli = CliSession(dev, mode=Mode.CONFIG)
    out = []
    for line in lines:
        reply = cli.execute(line)
        out.append((cli.prompt, reply.output))
    return out


def changes(before: str, after: str) -> list[str]:
    """The lines a unified diff of two configurations adds (+) and removes (-)."""
    return [line.rstrip("\n") for line in difflib.unified_diff(
        before.splitlines(True), after.splitlines(True), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def section(text: str, head: str) -> str:
    """The block of ``text`` that starts with the line ``head`` (to the next margin line)."""
    lines = text.splitlines(True)
    start = lines.index(head + "\n")
    end = next((at for at in range(start + 1, len(lines)) if lines[at][:1] not in (" ", "")),
               len(lines))
    return "".join(lines[start:end])


# --- the SSH shell: prompts and levels -----------------------------------------------------------


async def shell_prompts(endpoint: DeviceEndpoint, lines: list[str]) -> list[str]:
    """The prompt the device printed after each of ``lines`` (from ``configure terminal``)."""
    async with ssh_connect(endpoint) as conn:
        shell = await Shell.open(conn)
        if endpoint.device.platform.style.login_privilege == 1:
            await shell.enable(SECRET)
        prompts = []
        for line in ["configure terminal", *lines]:
            shell.write(line.encode() + b"\r")
            await shell.read_until(line.encode() + b"\r\n")
            printed = (await shell.read_until(PROMPT)).decode()
            prompts.append(printed.rsplit("\n", 1)[-1].strip())
        return prompts


def test_ios_prompts_and_exit_levels_over_ssh(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator("cisco_ios").endpoints[0]
    host = endpoint.device.hostname
    lines = ["router bgp 64500", "address-family ipv4", "neighbor 192.0.2.9 activate", "exit",
             "address-family ipv6", "exit-address-family", "address-family ipv4 unicast vrf RED",
             "ntp server 198.18.0.99", "vrf definition RED", "address-family ipv4", "end"]
    prompts = asyncio.run(shell_prompts(endpoint, lines))
    assert prompts == [f"{host}(config)#", f"{host}(config-router)#",
                       f"{host}(config-router-af)#", f"{host}(config-router-af)#",
                       f"{host}(config-router)#", f"{host}(config-router-af)#",
                       f"{host}(config-router)#", f"{host}(config-router-af)#",
                       f"{host}(config)#",  # a global command leaves both levels
                       f"{host}(config-vrf)#", f"{host}(config-vrf-af)#", f"{host}#"]
    config = endpoint.device.transcript(RUNNING)
    bgp = section(config, "router bgp 64500")
    assert bgp.endswith(" exit-address-family\n !\n address-family ipv6\n exit-address-family\n"
                        " !\n address-family ipv4 vrf RED\n exit-address-family\n")
    assert "  neighbor 192.0.2.9 activate\n exit-address-family\n !\n address-family ipv6\n" in bgp
    assert section(config, "vrf definition RED") == (
        "vrf definition RED\n !\n address-family ipv4\n exit-address-family\n")
    assert "\nntp server 198.18.0.99\n" in config


def test_asa_prompts_and_exit_levels_over_ssh(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator("cisco_asa").endpoints[0]
    host = endpoint.device.hostname
    lines = ["policy-map global_policy", "class inspection_default", "inspect http", "exit",
             "class class-default", "exit", "exit", "policy-map type inspect dns preset_dns_map",
             "parameters", "exit", "exit"]
    prompts = asyncio.run(shell_prompts(endpoint, lines))
    assert prompts == [f"{host}(config)#", f"{host}(config-pmap)#", f"{host}(config-pmap-c)#",
                       f"{host}(config-pmap-c)#", f"{host}(config-pmap)#",
                       f"{host}(config-pmap-c)#", f"{host}(config-pmap)#", f"{host}(config)#",
                       f"{host}(config-pmap)#", f"{host}(config-pmap-p)#",
                       f"{host}(config-pmap)#", f"{host}(config)#"]
    policy = section(endpoint.device.transcript(RUNNING), "policy-map global_policy")
    assert "  inspect icmp\n  inspect http\n class class-default\n" in policy  # at depth 2


# --- negation and where new lines go --------------------------------------------------------------


def test_ios_negation_inside_and_of_nested_blocks() -> None:
    dev = device("cisco_ios")
    printed = typed(dev, ["router bgp 64500", "address-family ipv4",
                          "no neighbor 203.0.113.9 activate", "neighbor 192.0.2.9 next-hop-self",
                          "exit", "neighbor 192.0.2.9 remote-as 65010", "address-family ipv6",
                          "exit", "no address-family ipv6", "no neighbor 198.51.100.5", "end"])
    assert all(output == "" for _, output in printed), printed
    bgp = section(dev.transcript(RUNNING), "router bgp 64500")
    assert bgp == (
        "router bgp 64500\n"
        " bgp router-id 198.19.255.1\n"
        " bgp log-neighbor-changes\n"
        " neighbor 203.0.113.9 remote-as 64496\n"
        " neighbor 203.0.113.9 description ISP-A\n"
        " neighbor 203.0.113.9 password 7 110A1016141D5A5E57\n"
        " neighbor 192.0.2.9 remote-as 65010\n"  # before the address families
        " !\n"
        " address-family ipv4\n"
        "  network 203.0.113.128 mask 255.255.255.128\n"
        "  neighbor 203.0.113.9 prefix-list PL-OUR-PREFIXES out\n"
        "  neighbor 203.0.113.9 route-map RM-ISP-A-IN in\n"
        "  neighbor 192.0.2.9 next-hop-self\n"
        " exit-address-family\n")  # `no neighbor 198.51.100.5` took its af lines too


def test_ios_no_neighbor_remote_as_removes_the_neighbour_whole() -> None:
    """``no neighbor X remote-as N`` takes neighbour X's every line, in the address families
    too, as ``no neighbor X`` does; ``no neighbor X description ...`` takes that line only."""
    dev = device("cisco_ios")
    printed = typed(dev, ["router bgp 64500", "no neighbor 203.0.113.9 remote-as 64496",
                          "no neighbor 198.51.100.5 description ISP-B", "end"])
    assert all(output == "" for _, output in printed), printed
    bgp = section(dev.transcript(RUNNING), "router bgp 64500")
    assert "203.0.113.9" not in bgp
    assert " neighbor 198.51.100.5 description" not in bgp
    assert bgp.count("neighbor 198.51.100.5") == 6  # remote-as, password, 4 in ipv4


def test_asa_negation_of_a_class_and_an_inspect_line() -> None:
    dev = device("cisco_asa")
    printed = typed(dev, ["policy-map global_policy", "class inspection_default",
                          "no inspect ftp", "exit", "class VOICE", "set connection conn-max 50",
                          "exit", "no class class-default", "end"])
    assert all(output == "" for _, output in printed), printed
    policy = section(dev.transcript(RUNNING), "policy-map global_policy")
    assert "inspect ftp" not in policy
    assert "inspect h323 h225" in policy
    assert policy.endswith("  inspect icmp\n class VOICE\n  set connection conn-max 50\n")
    dev = device("cisco_asa")
    typed(dev, ["policy-map global_policy", "class VOICE", "end"])
    policy = section(dev.transcript(RUNNING), "policy-map global_policy")
    assert policy.endswith(" class VOICE\n class class-default\n  user-statistics accounting\n")


def test_a_line_no_mode_knows_is_refused_where_it_is() -> None:
    dev = device("cisco_ios")
    before = dev.transcript(RUNNING)
    printed = typed(dev, ["router bgp 64500", "address-family ipv4", "neighbor 1.2.3.4 frob"])
    prompt, output = printed[-1]
    assert prompt == "R1(config-router-af)#"  # still in the address family
    assert "% Invalid input detected at '^' marker." in output
    assert dev.transcript(RUNNING) == before


def test_asa_object_nat_goes_to_the_nat_section() -> None:
    dev = device("cisco_asa")
    typed(dev, ["object network OBJ-PARTNER-NET", "nat (partner,outside) dynamic interface",
                "exit", "object network OBJ-NEW", "host 192.0.2.77",
                "nat (dmz,outside) static 203.0.113.77", "end"])
    config = dev.transcript(RUNNING)
    assert "object network OBJ-PARTNER-NET\n subnet 198.51.100.64 255.255.255.192\n" \
           "object network OBJ-VOICE-NET\n" in config  # the definition keeps no NAT line
    assert "object network OBJ-VOICE-NET\n subnet 198.19.70.0 255.255.255.0\n" \
           "object network OBJ-NEW\n host 192.0.2.77\nobject-group" in config
    assert " nat (voice,outside) dynamic interface\n" \
           "object network OBJ-PARTNER-NET\n nat (partner,outside) dynamic interface\n" \
           "object network OBJ-NEW\n nat (dmz,outside) static 203.0.113.77\n!\n" in config
    typed(dev, ["object network OBJ-NEW", "no nat (dmz,outside) static 203.0.113.77", "end"])
    config = dev.transcript(RUNNING)
    assert config.count("object network OBJ-NEW\n") == 1  # the empty NAT block went


# --- a configuration file read back ---------------------------------------------------------------


def over_shell(endpoint: DeviceEndpoint, commands: list[str]) -> list[str]:
    async def session() -> list[str]:
        async with ssh_connect(endpoint) as conn:
            shell = await Shell.open(conn)
            if endpoint.device.platform.style.login_privilege == 1:
                await shell.enable(SECRET)
            outputs = []
            for command in commands:
                shell.write(command.encode() + b"\r")
                while True:  # IOS asks for the destination: the default answer
                    chunk = await shell.read_until(QUESTION_OR_PROMPT)
                    outputs.append(chunk.decode())
                    if not chunk.rstrip().endswith(b"?"):
                        break
                    shell.write(b"\r")
            return outputs

    return asyncio.run(session())


def over_https(emu: EmulatorThread, commands: list[str]) -> list[str]:
    endpoint = emu.endpoints[0]
    outputs = []
    with https_client(emu) as client:
        for command in commands:
            response = client.get(f"https://{endpoint.host}:{endpoint.https_port}/admin/exec/"
                                  + quote(command, safe=""))
            assert response.status_code == 200, response.text
            outputs.append(response.text)
    return outputs


@pytest.mark.parametrize("transport", ["shell", "https"])
@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_asa"])
def test_copy_to_a_file_and_back_leaves_the_configuration_identical(
        fresh_emulator: FreshEmulator, platform: str, transport: str) -> None:
    emu = fresh_emulator(platform)
    endpoint = emu.endpoints[0]
    before = endpoint.device.transcript(RUNNING)
    outputs = (over_shell(endpoint, ROUND_TRIP[platform]) if transport == "shell"
               else over_https(emu, ROUND_TRIP[platform]))
    assert "Invalid input" not in "".join(outputs)
    assert "bytes copied" in outputs[-1]
    after = endpoint.device.transcript(RUNNING)
    assert after == before
    assert (AF_IPV4 if platform == "cisco_ios" else "  inspect icmp\n") in after


def test_configure_replace_with_a_changed_nested_line_makes_exactly_that_change(
        fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator("cisco_ios").endpoints[0]
    dev = endpoint.device
    before = running_text(dev)
    old = "  neighbor 203.0.113.9 route-map RM-ISP-A-IN in\n"
    new = "  neighbor 203.0.113.9 route-map RM-ISP-A-NEW in\n"
    write_file(dev.files, dev.files.resolve("flash:changed.cfg"), before.replace(old, new))
    diff, replaced = over_shell(endpoint, [
        "show archive config differences flash:changed.cfg system:running-config",
        "configure replace flash:changed.cfg force"])
    assert diff.replace("\r\n", "\n").split("\n", 1)[1].startswith(
        "!Contextual Config Diffs:\n"
        "router bgp 64500\n address-family ipv4\n  +neighbor 203.0.113.9 route-map RM-ISP-A-IN in\n"
        "router bgp 64500\n address-family ipv4\n  -neighbor 203.0.113.9 route-map RM-ISP-A-NEW in\n")
    assert "Rollback Done" in replaced
    assert "Invalid input" not in replaced
    assert changes(before, running_text(dev)) == [f"-{old.rstrip()}", f"+{new.rstrip()}"]


def test_configure_replace_adds_and_removes_whole_nested_blocks() -> None:
    dev = device("cisco_ios")
    cli = CliSession(dev, mode=Mode.PRIV)
    before = running_text(dev)
    without = before.replace(" !\n" + AF_IPV4, "").replace(
        " !\n address-family ipv6\n exit-address-family\n", "")
    assert without.count("address-family") == 2
    write_file(dev.files, dev.files.resolve("flash:without.cfg"), without)
    write_file(dev.files, dev.files.resolve("flash:with.cfg"), before)
    listed = cli.execute("configure replace flash:without.cfg force list").text()
    assert "!List of Commands:\nvrf definition Mgmt-intf\n no address-family ipv6\n" \
           "router bgp 64500\n no address-family ipv4\nend\n" in listed
    assert running_text(dev) == without
    assert "Invalid input" not in cli.execute("configure replace flash:with.cfg force").text()
    assert running_text(dev) == before


def test_incremental_diff_of_nested_lines() -> None:
    dev = device("cisco_ios")
    cli = CliSession(dev, mode=Mode.PRIV)
    text = "router bgp 64500\n !\n address-family ipv4\n  neighbor 203.0.113.9 activate\n" \
           "  neighbor 203.0.113.9 next-hop-self\n exit-address-family\nend\n"
    write_file(dev.files, dev.files.resolve("flash:merge.cfg"), text)
    diff = cli.execute("show archive config incremental-diffs flash:merge.cfg").text()
    assert diff == ("!List of Commands:\nrouter bgp 64500\n address-family ipv4\n"
                    "  neighbor 203.0.113.9 next-hop-self\nend\n")


@pytest.mark.parametrize("transport", ["shell", "https"])
def test_nested_lines_typed_over_each_transport(fresh_emulator: FreshEmulator,
                                                transport: str) -> None:
    """Netmiko-style lines (indented as a file, with the closing line) over the SSH shell and
    HTTPS ``POST /admin/config``: each lands under its parent, none twice."""
    emu = fresh_emulator("cisco_ios")
    printed = configure(emu, transport, [
        "router bgp 64500", " address-family ipv4", "  neighbor 203.0.113.9 activate",
        "  neighbor 203.0.113.9 next-hop-self", " exit-address-family",
        " neighbor 203.0.113.9 description ISP-A-primary"])
    assert "Invalid" not in printed
    bgp = section(emu.endpoints[0].device.transcript(RUNNING), "router bgp 64500")
    assert bgp.count("neighbor 203.0.113.9 activate") == 1
    assert " neighbor 203.0.113.9 description ISP-A-primary\n" \
           " neighbor 203.0.113.9 password" in bgp  # replaced in place
    assert "  neighbor 203.0.113.9 route-map RM-ISP-A-IN in\n" \
           "  neighbor 203.0.113.9 next-hop-self\n exit-address-family\n" in bgp
