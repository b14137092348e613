"""Inventories as a user writes them: every format read into the same targets, platform names
mapped (unknown ones refused with the list), credentials from the inventory, the environment, a
prompt, a key file or the agent, mistakes as one line; round-to-round comparison with masks; the
safety valves. No network here except where a real server is named."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

from mgmtbench.emulator.oracle import expected_output, show_commands
from mgmtbench.errors import ClientTimeout, UsageError
from mgmtbench.targets import Auth
from mgmtbench.targets.inventory import formats, load_inventory
from mgmtbench.targets.platforms import inventory_platforms, platform_for
from mgmtbench.targets.safety import Pacer, deadline, is_show, refusal
from mgmtbench.targets.stable import compare_rounds, mask

ENV = {"MGMTBENCH_PASSWORD": "env-pw", "MGMTBENCH_USERNAME": "env-user"}


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def summary(path: Path, env: dict[str, str] | None = None) -> list[tuple[object, ...]]:
    inventory = load_inventory(path, env=ENV if env is None else env)
    return [(h.name, h.target.host, h.target.ssh_port, h.target.https_port, h.target.platform,
             h.target.username, h.groups) for h in inventory.hosts]


# --- formats ----------------------------------------------------------------------------------

def test_nornir_inherits_host_then_groups_then_defaults(tmp_path: Path) -> None:
    write(tmp_path, "hosts.yaml", """
r1:
  hostname: 198.18.0.1
  groups: [edge, core]
  data: {https_port: 8443}
r2:
  hostname: 198.18.0.2
  port: 2222
  username: own
  groups: [core]
fw1:
  hostname: 198.18.0.3
  platform: asa
""")
    write(tmp_path, "groups.yaml", """
edge: {platform: cisco_xe, username: edge-user}
core:
  platform: ios
  groups: [site]
  connection_options: {netmiko: {extras: {secret: en-core}}}
site: {username: site-user, data: {timeout: 7}}
""")
    write(tmp_path, "defaults.yaml", "username: default-user\npassword: file-pw\n")
    inventory = load_inventory(tmp_path, env={})
    assert inventory.format == "nornir"
    assert summary(tmp_path / "hosts.yaml", env={}) == [
        ("r1", "198.18.0.1", 22, 8443, "cisco_ios", "edge-user", ("edge", "core", "site")),
        ("r2", "198.18.0.2", 2222, 443, "cisco_ios", "own", ("core", "site")),
        ("fw1", "198.18.0.3", 22, 443, "cisco_asa", "default-user", ()),
    ]
    r1, _, fw1 = inventory.hosts
    assert (r1.target.password, r1.target.enable_secret, r1.timeout) == ("file-pw", "en-core", 7.0)
    assert (fw1.target.enable_secret, fw1.timeout) == ("file-pw", 30.0)  # the password


def test_ansible_variables_from_all_to_group_to_host(tmp_path: Path) -> None:
    path = write(tmp_path, "inventory.yml", """
all:
  vars: {ansible_user: netops, mgmtbench_https_port: 8443}
  hosts:
    lone: {ansible_host: 198.18.0.9, ansible_network_os: cisco.ios.ios}
  children:
    routers:
      vars: {ansible_network_os: cisco.ios.ios, ansible_become_password: en}
      children:
        edge:
          vars: {ansible_port: 2200}
          hosts:
            r1: {ansible_host: 198.18.0.1}
            r2: {ansible_host: 198.18.0.2, ansible_port: 2201, mgmtbench_https_port: 9443}
    firewalls:
      vars: {ansible_network_os: asa, ansible_user: fwops}
      hosts:
        fw1: {ansible_host: 198.18.0.3, ansible_password: fw-pw}
""")
    assert summary(path) == [
        ("lone", "198.18.0.9", 22, 8443, "cisco_ios", "netops", ()),
        ("r1", "198.18.0.1", 2200, 8443, "cisco_ios", "netops", ("routers", "edge")),
        ("r2", "198.18.0.2", 2201, 9443, "cisco_ios", "netops", ("routers", "edge")),
        ("fw1", "198.18.0.3", 22, 8443, "cisco_asa", "fwops", ("firewalls",)),
    ]
    hosts = {h.name: h.target for h in load_inventory(path, env=ENV).hosts}
    assert (hosts["r1"].password, hosts["r1"].enable_secret) == ("env-pw", "en")
    assert hosts["fw1"].password == "fw-pw"  # the inventory's own wins over the environment


@pytest.mark.parametrize("shape", ["topology-data", "inspect-list", "inspect-containers",
                                   "inspect-by-lab"])
def test_containerlab_topology_data_and_every_inspect_shape(tmp_path: Path, shape: str) -> None:
    containers = [
        {"lab_name": "lab", "name": "clab-lab-r1", "kind": "cisco_c8000v", "state": "running",
         "ipv4_address": "198.18.0.1/24", "ipv6_address": "N/A"},
        {"lab_name": "lab", "name": "clab-lab-fw1", "kind": "cisco_asav", "state": "running",
         "ipv4_address": "198.18.0.3/24"},
    ]
    data: object = {
        "topology-data": {"name": "lab", "type": "clab", "nodes": {
            "r1": {"kind": "cisco_c8000v", "mgmt-ipv4-address": "198.18.0.1", "group": "wan"},
            "fw1": {"kind": "linux", "mgmt-ipv4-address": "198.18.0.3",
                    "labels": {"mgmtbench-platform": "cisco_asa", "mgmtbench-https-port": "8443"}},
        }},
        "inspect-list": containers,
        "inspect-containers": {"containers": containers},
        "inspect-by-lab": {"lab": containers},
    }[shape]
    path = write(tmp_path, "lab.json", json.dumps(data))
    found = summary(path)
    assert [row[:5] for row in found] == [
        ("r1", "198.18.0.1", 22, 443, "cisco_ios"),
        ("fw1", "198.18.0.3", 22, 8443 if shape == "topology-data" else 443, "cisco_asa"),
    ]
    assert found[0][6] == (("wan", "cisco_c8000v") if shape == "topology-data" else
                           ("cisco_c8000v",))


def test_native_toml_groups_defaults_and_password_from_a_named_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "ca.pem", "not checked here")
    path = write(tmp_path, "lab.toml", """
[defaults]
platform = "iosxe"
username = "netops"
password_env = "LAB_PW"
ca_file = "ca.pem"
[groups.far]
timeout = 60
ssh_port = 2022
[hosts.r1]
host = "198.18.0.1"
groups = ["far"]
[hosts.r2]
host = "198.18.0.2"
ssh_port = 22
""")
    monkeypatch.setenv("LAB_PW", "from-var")
    hosts = load_inventory(path, env={}, timeout=9).hosts
    assert [(h.name, h.target.ssh_port, h.timeout, h.target.password) for h in hosts] == [
        ("r1", 2022, 60.0, "from-var"), ("r2", 22, 9.0, "from-var")]
    assert hosts[0].target.ca_file == tmp_path / "ca.pem"  # relative to the inventory


def test_every_format_gives_the_same_targets(tmp_path: Path) -> None:
    """One lab described four ways: the targets a benchmark gets are identical."""
    write(tmp_path, "nornir/hosts.yaml", "r1: {hostname: 198.18.0.1, platform: cisco_xe}\n"
                                         "r2: {hostname: 198.18.0.2, platform: ios}\n")
    write(tmp_path, "ansible.yaml", "all:\n  vars: {ansible_network_os: ios}\n  hosts:\n"
                                    "    r1: {ansible_host: 198.18.0.1}\n"
                                    "    r2: {ansible_host: 198.18.0.2}\n")
    write(tmp_path, "clab.json", json.dumps({"nodes": {
        "r1": {"kind": "cisco_iol", "mgmt-ipv4-address": "198.18.0.1"},
        "r2": {"kind": "cisco_cat9kv", "mgmt-ipv4-address": "198.18.0.2"}}}))
    write(tmp_path, "lab.toml", '[defaults]\nplatform = "cisco_ios"\n'
                                '[hosts.r1]\nhost = "198.18.0.1"\n[hosts.r2]\nhost = "198.18.0.2"\n')
    env = {**ENV, "MGMTBENCH_USERNAME": "admin"}
    found = {name: [h.target for h in load_inventory(tmp_path / name, env=env).hosts]
             for name in ("nornir", "ansible.yaml", "clab.json", "lab.toml")}
    assert len({tuple(t) for t in found.values()}) == 1, found
    assert {load_inventory(tmp_path / n, env=env).format for n in found} == set(formats())


# --- platforms ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "ours"), [
    ("cisco_ios", "cisco_ios"), ("cisco_xe", "cisco_ios"), ("ios", "cisco_ios"),
    ("IOSXE", "cisco_ios"), ("cisco.ios.ios", "cisco_ios"), ("cisco_c8000v", "cisco_ios"),
    ("cisco_asa", "cisco_asa"), ("asa", "cisco_asa"), ("cisco.asa.asa", "cisco_asa"),
])
def test_platform_names_map_to_ours(name: str, ours: str) -> None:
    assert platform_for(name, host="h").name == ours


def test_unknown_platform_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "i.toml", '[hosts.sw1]\nhost = "198.18.0.1"\nplatform = "vrp"\n')
    with pytest.raises(UsageError) as caught:
        load_inventory(path, env={**ENV, "MGMTBENCH_USERNAME": "u"})
    message = str(caught.value)
    assert "host sw1: unknown platform 'vrp'" in message
    assert all(name in message for name in inventory_platforms())
    assert "cisco_xe" in message
    assert "\n" not in message


def test_every_platform_finds_its_own_version_string() -> None:
    for name, platform in inventory_platforms().items():
        text = expected_output(name, "R1", "198.18.0.1", ["show version"])
        version = platform.version_of(text)
        assert version
        assert version in text
        other = next(p for p in inventory_platforms().values() if p.name != name)
        assert other.version_of(text) is None  # the wrong platform is noticed


# --- credentials --------------------------------------------------------------------------------

def one_host(tmp_path: Path, extra: str = "") -> Path:
    return write(tmp_path, "i.toml", f'[hosts.r1]\nhost = "198.18.0.1"\nplatform = "ios"\n'
                                     f'{extra}')


def test_credentials_from_the_environment(tmp_path: Path) -> None:
    [host] = load_inventory(one_host(tmp_path), env={
        "MGMTBENCH_USERNAME": "u", "MGMTBENCH_PASSWORD": "p", "MGMTBENCH_ENABLE_SECRET": "e"}).hosts
    assert (host.target.username, host.target.password, host.target.enable_secret,
            host.target.auth) == ("u", "p", "e", Auth.PASSWORD)
    assert "'p'" not in repr(host.target)


def test_netconf_port_is_830_unless_the_inventory_says(tmp_path: Path) -> None:
    [plain] = load_inventory(one_host(tmp_path), env=ENV).hosts
    assert plain.target.netconf_port == 830  # a real device's NETCONF port
    [chosen] = load_inventory(one_host(tmp_path, "netconf_port = 8830\n"), env=ENV).hosts
    assert chosen.target.netconf_port == 8830


def test_gnmi_port_is_9339_unless_the_inventory_says(tmp_path: Path) -> None:
    [plain] = load_inventory(one_host(tmp_path), env=ENV).hosts
    assert plain.target.gnmi_port == 9339  # a real device's gNMI port
    [chosen] = load_inventory(one_host(tmp_path, "gnmi_port = 57400\n"), env=ENV).hosts
    assert chosen.target.gnmi_port == 57400


def test_http3_is_not_served_unless_the_inventory_says(tmp_path: Path) -> None:
    [plain] = load_inventory(one_host(tmp_path), env=ENV).hosts
    assert plain.target.http3_port is None  # real devices' management APIs have no HTTP/3
    [chosen] = load_inventory(one_host(tmp_path, "http3_port = 443\n"), env=ENV).hosts
    assert chosen.target.http3_port == 443


def test_a_prompt_is_asked_once_per_user(tmp_path: Path) -> None:
    path = write(tmp_path, "i.toml", '[defaults]\nplatform = "ios"\nusername = "u"\n'
                                     '[hosts.r1]\nhost = "198.18.0.1"\n'
                                     '[hosts.r2]\nhost = "198.18.0.2"\n')
    asked: list[str] = []

    def prompt(question: str) -> str:
        asked.append(question)
        return "typed"

    hosts = load_inventory(path, env={}, prompt=prompt).hosts
    assert [h.target.password for h in hosts] == ["typed", "typed"]
    assert asked == ["Password for u (inventory hosts): "]


def test_key_file_and_agent(tmp_path: Path) -> None:
    key = write(tmp_path, "id_ed25519", "key")
    [by_key] = load_inventory(one_host(tmp_path, 'username = "u"\nkey_file = "id_ed25519"\n'),
                              env={}).hosts
    assert (by_key.target.auth, by_key.target.key_file) == (Auth.KEY, key)
    [by_agent] = load_inventory(one_host(tmp_path, 'username = "u"\n'),
                                env={"SSH_AUTH_SOCK": "/run/agent.sock"}).hosts
    assert (by_agent.target.auth, by_agent.target.agent_socket) == (Auth.AGENT,
                                                                    Path("/run/agent.sock"))


@pytest.mark.parametrize(("extra", "env", "says"), [
    ("", {"MGMTBENCH_PASSWORD": "p"}, "host r1: no user name: set username in the inventory or "
                                      "export MGMTBENCH_USERNAME"),
    ('username = "u"\n', {}, "host r1: no credentials: export MGMTBENCH_PASSWORD"),
    ('username = "u"\nauth = "key"\n', {}, "auth 'key' needs a key file"),
    ('username = "u"\nkey_file = "missing"\n', {}, "does not exist"),
    ('username = "u"\nauth = "agent"\n', {}, "SSH_AUTH_SOCK is not set"),
    ('username = "u"\nauth = "kerberos"\n', {}, "unknown auth 'kerberos': choose password, key, "
                                               "agent"),
    ('username = "u"\npassword = "p"\n', {}, "keep passwords out of the file"),
    ('username = "u"\npassword_env = "NOPE_NOT_SET"\n', {}, "NOPE_NOT_SET, which is not set"),
    ('ssh_port = 70000\n', ENV, "a port is a number 1..65535"),
    ('colour = "blue"\n', ENV, "unknown settings ['colour']"),
    ('groups = ["nope"]\n', ENV, "groups must list [groups.NAME] tables"),
])
def test_mistakes_are_one_line(tmp_path: Path, extra: str, env: dict[str, str],
                               says: str) -> None:
    with pytest.raises(UsageError, match=re.escape(says)) as caught:
        load_inventory(one_host(tmp_path, extra), env=env)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("name", "text", "says"), [
    ("a.yml", "all:\n  hosts:\n    r1:\n      ansible_password: '{{ vault_pw }}'\n",
     "templated or vault-encrypted values cannot be read: export MGMTBENCH_PASSWORD"),
    ("a.yml", "all:\n  hosts:\n    r1:\n      ansible_password: !vault |\n        $ANSIBLE_VAULT;1.1\n",
     "vault-encrypted values cannot be read"),
    ("hosts.yaml", "r1: {hostname: 198.18.0.1, groups: [nope]}\n", "unknown group 'nope'"),
    ("x.json", '{"nodes": {"r1": {"kind": "cisco_iol"}}}', "no management address"),
    ("x.toml", "[hosts.r1\n", "not valid TOML"),
    ("x.txt", "whatever", "not an inventory mgmtbench reads: give one of"),
])
def test_unusable_files_are_one_line(tmp_path: Path, name: str, text: str, says: str) -> None:
    with pytest.raises(UsageError, match=re.escape(says)) as caught:
        load_inventory(write(tmp_path, name, text), env=ENV)
    assert "\n" not in str(caught.value)


def test_limit_globs_groups_and_exclusions(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yml", """
all:
  vars: {ansible_network_os: ios, ansible_user: u}
  children:
    core: {hosts: {core-1: {ansible_host: 198.18.0.1}, core-2: {ansible_host: 198.18.0.2}}}
    edge: {hosts: {edge-1: {ansible_host: 198.18.0.3}, edge-9: {ansible_host: 198.18.0.4}}}
""")

    def names(limit: str) -> list[str]:
        return [h.name for h in load_inventory(path, env=ENV, limit=limit).hosts]

    assert names("core") == ["core-1", "core-2"]
    assert names("edge-*,core-2") == ["core-2", "edge-1", "edge-9"]
    assert names("!edge-9") == ["core-1", "core-2", "edge-1"]
    assert names("198.18.0.[12],!core-1") == ["core-2"]
    with pytest.raises(UsageError, match=r"--limit 'dist' matches no host \(hosts: core-1, "):
        names("dist")


def test_a_dns_name_is_resolved_once_into_the_target(tmp_path: Path) -> None:
    [host] = load_inventory(write(tmp_path, "i.toml", '[hosts.r1]\nhost = "localhost"\n'
                                  'platform = "ios"\nusername = "u"\n'), env=ENV).hosts
    assert host.target.host in ("127.0.0.1", "::1")  # clients connect to the address
    assert host.address == "localhost"


# --- round-to-round comparison ------------------------------------------------------------------

def test_what_a_live_device_changes_by_itself_is_masked() -> None:
    ios = platform_for("cisco_ios", host="h")
    cmds = [*show_commands("cisco_ios", 8), "show interfaces"]
    first = expected_output("cisco_ios", "R1", "198.18.0.1", cmds)
    # The emulator's own uptime and clock (they run from its start) replaced by later ones.
    later = re.sub(r"uptime is .+", "uptime is 1 year, 2 weeks, 18 minutes", first, count=1)
    later = re.sub(r"^\d\d:\d\d:\d\d\.\d{3} UTC .+$", "14:04:02.007 UTC Sun Nov 22 2026", later,
                   count=1, flags=re.M)
    later = (later.replace("via 203.0.113.9, 12w3d", "via 203.0.113.9, 12w4d")
             .replace("31877430512 packets input", "31877501234 packets input")
             .replace("00:00:35    198.19.1.6", "00:00:31    198.19.1.6"))
    later = re.sub(r"  11   ([0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4})", r"  12   \1", later, count=1)
    assert later != first
    for changed in ("18 minutes", "14:04:02.007", "12w4d", "31877501234", "00:00:31", "  12   "):
        assert changed in later, changed
    assert compare_rounds([first, later, first], ios) is None
    assert mask(first, ios) == mask(later, ios)


@pytest.mark.parametrize(("old", "new", "line"), [
    ("Internet address is 203.0.113.10/30", "Internet address is 203.0.113.14/30",
     "+  Internet address is 203.0.113.14/30"),
    ("GigabitEthernet0/0/0 is up, line protocol is up",
     "GigabitEthernet0/0/0 is down, line protocol is down",
     "+GigabitEthernet0/0/0 is down, line protocol is down"),
])
def test_a_real_change_is_a_mismatch_with_a_diff(old: str, new: str, line: str) -> None:
    ios = platform_for("cisco_ios", host="h")
    first = expected_output("cisco_ios", "R1", "198.18.0.1", ["show interfaces"])
    assert old in first
    mismatch = compare_rounds([first, first, first.replace(old, new, 1)], ios)
    assert mismatch is not None
    assert mismatch.round == 2
    assert line in mismatch.diff.splitlines()
    assert f"-{old}" in mismatch.diff.replace("-  ", "-")
    assert str(mismatch).startswith("round 2's output differs from the first round's")


def test_a_cut_output_or_another_device_is_a_mismatch() -> None:
    asa = platform_for("asa", host="h")
    cmds = show_commands("cisco_asa", 5)
    first = expected_output("cisco_asa", "fw1", "198.18.0.1", cmds)
    assert compare_rounds([first, first[: len(first) // 2]], asa) is not None
    other = expected_output("cisco_asa", "fw2", "198.18.0.2", cmds)
    mismatch = compare_rounds([first, other], asa)
    assert mismatch is not None
    assert "fw2" in mismatch.diff


# --- safety -------------------------------------------------------------------------------------

def test_only_show_commands_without_allow_config() -> None:
    assert all(is_show(c) for c in ("show version", "sh ip int br", "SHO clock"))
    assert not any(is_show(c) for c in ("configure terminal", "s", "write memory", "shutdown",
                                        "reload", ""))
    reason = refusal(["show version", "configure terminal"], allow_config=False)
    assert reason is not None
    assert "'configure terminal'" in reason
    assert "--allow-config" in reason
    assert refusal(["show version"], allow_config=False) is None
    assert refusal(["show version"], allow_config=False, writes=True) is not None
    assert refusal(["configure terminal"], allow_config=True, writes=True) is None


def test_pacer_keeps_the_session_rate() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = Pacer(4.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        pacer.wait(2)  # 2 sessions at 4/s: one round every 0.5 s
    assert slept == pytest.approx([0.5] * 4)
    now[0] += 10  # idle: no debt, no sleep
    pacer.wait(2)
    assert len(slept) == 4


def test_a_host_that_stops_answering_times_out() -> None:
    before = signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    with deadline(0.2, "host r1") as arm:
        arm()
        with pytest.raises(ClientTimeout, match=r"host r1 did not answer within 0\.2 s"):
            time.sleep(5)  # a client blocked on a silent device
    assert time.monotonic() - start < 2
    assert signal.getsignal(signal.SIGALRM) == before  # the handler is put back
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
