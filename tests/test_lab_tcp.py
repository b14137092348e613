"""The lab owns its TCP: congestion control, MTU and initial window on both ends come from the
profile, not from the host, and every result records what a live connection used.

The device side is checked with ``ss`` (iproute2) run inside the lab's namespace, an instrument
of its own, not the lab's sock_diag reading; the benchmark side with ``getsockopt`` on a socket the
test opens itself. On a host whose default congestion control is bbr (as this project's machines),
a lab built before the lab owned its TCP fails the cubic case: its namespace copied bbr.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from mgmtbench.emulator import Credentials
from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.lab import SSH_PORT, has_net_admin
from mgmtbench.lab.profiles import load_profiles
from mgmtbench.lab.tcp import available
from mgmtbench.results.sections import lab_tcp
from mgmtbench.results.sections.base import ReportContext
from mgmtbench.results.tcp import describe
from mgmtbench.testing import PASSWORD, SECRET, USERNAME
from mgmtbench.testing.summary import _lab_tcp

needs_lab = pytest.mark.skipif(
    not has_net_admin(), reason="lab tests build network namespaces: run as root or with "
                                "CAP_NET_ADMIN")
HOST_CC = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
# Every congestion control the kernel offers of these three: the host's default among them, so
# at least one case asks for something other than what the host would give.
CONTROLS = [cc for cc in ("cubic", "bbr", "reno") if cc in available()]
TCP_INFO, SND_MSS_AT, SND_CWND_AT = 11, 16, 80


def _lab(request: pytest.FixtureRequest, profile: str) -> Lab:
    return Lab(resolve(profile), backend=str(request.config.getoption("--link-backend")),
               credentials=Credentials(username=USERNAME, password=PASSWORD,
                                       enable_secret=SECRET),
               calibration_samples=3)


def _ss_device_side(lab: Lab, peer_port: int) -> str:
    """``ss -tin`` inside the lab's namespace, the line of the device's end of the connection
    from ``peer_port`` (waiting for it to be established there: it is half an RTT after the
    client's)."""
    assert lab.state is not None
    for _ in range(200):
        out = subprocess.run(
            ["ip", "netns", "exec", lab.state.netns, "ss", "-tinH", "state", "established",
             f"( sport = :{SSH_PORT} and dport = :{peer_port} )"],
            capture_output=True, text=True, check=True).stdout
        if out.strip():
            return " ".join(out.split())
        time.sleep(0.01)
    raise AssertionError(f"no established device-side socket for port {peer_port}")


# --- profiles: no root needed ----------------------------------------------------------------


def test_profiles_default_to_cubic_mtu_1500_and_the_kernels_initial_window() -> None:
    profile = resolve("regional")
    assert (profile.device_cc, profile.client_cc, profile.mtu, profile.initcwnd) == \
        ("cubic", "cubic", 1500, 10)


def test_a_named_profile_with_overrides_keeps_its_link_and_names_the_change() -> None:
    profile = resolve("intercontinental+device_cc=bbr+mtu=1400")
    assert profile.rtt_ms == 150
    assert (profile.device_cc, profile.client_cc, profile.mtu) == ("bbr", "cubic", 1400)
    assert profile.name == "intercontinental+device_cc=bbr+mtu=1400"
    both = resolve("rtt=30,cc=reno,initcwnd=4")
    assert (both.device_cc, both.client_cc, both.initcwnd) == ("reno", "reno", 4)


@pytest.mark.parametrize(("spec", "message"), [
    ("regional+mtu=100", "mtu must be 576..65535"),
    ("regional+mtu=1500.5", "bad whole number"),
    ("regional+cc=BBR!", "must be a congestion control's name"),
    ("regional+window=3", "bad profile spec item"),
    ("nowhere+cc=bbr", "unknown profile 'nowhere'"),
])
def test_bad_tcp_settings_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        resolve(spec)


def test_profiles_file_takes_cc_for_both_ends(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text('[profiles.tunnel]\nrtt_ms = 40\ncc = "bbr"\nclient_cc = "cubic"\n'
                    "mtu = 1400\n")
    tunnel = load_profiles(path)["tunnel"]
    assert (tunnel.device_cc, tunnel.client_cc, tunnel.mtu) == ("bbr", "cubic", 1400)


@needs_lab
def test_a_congestion_control_the_kernel_lacks_is_refused_before_anything_is_built() -> None:
    with pytest.raises(UsageError, match=r"does not offer .*modprobe tcp_nosuchcc"):
        Lab(resolve("campus+device_cc=nosuchcc"))


# --- labs ------------------------------------------------------------------------------------


@needs_lab
@pytest.mark.parametrize("cc", CONTROLS)
def test_both_ends_use_the_profiles_congestion_control_not_the_hosts(
        request: pytest.FixtureRequest, cc: str) -> None:
    with _lab(request, f"campus+cc={cc}") as lab, \
            socket.create_connection((lab.devices[0].address, SSH_PORT), timeout=10) as sock:
        client_cc = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
        device_line = _ss_device_side(lab, sock.getsockname()[1])
        facts = lab.facts().as_dict()
    print(f"host default {HOST_CC}; asked {cc}; device side: {device_line}")
    assert client_cc.rstrip(b"\0").decode() == cc
    assert re.search(rf"(^| ){cc}( |$)", device_line), device_line
    tcp = facts["tcp"]
    assert isinstance(tcp, dict)
    assert (tcp["device"]["cc"], tcp["client"]["cc"]) == (cc, cc)
    assert tcp["mismatches"] == []


@needs_lab
def test_each_end_takes_its_own_congestion_control(request: pytest.FixtureRequest) -> None:
    if len(CONTROLS) < 2:
        pytest.skip(f"the kernel offers only {CONTROLS}")
    device_cc, client_cc = CONTROLS[1], CONTROLS[0]
    with _lab(request, f"campus+device_cc={device_cc}+client_cc={client_cc}") as lab, \
            socket.create_connection((lab.devices[0].address, SSH_PORT), timeout=10) as sock:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(
            b"\0").decode() == client_cc
        assert f" {device_cc} " in f" {_ss_device_side(lab, sock.getsockname()[1])} "


@needs_lab
def test_mtu_and_initial_window_follow_the_profile(request: pytest.FixtureRequest) -> None:
    with _lab(request, "campus+mtu=1400+initcwnd=4") as lab, \
            socket.create_connection((lab.devices[0].address, SSH_PORT), timeout=10) as sock:
        info = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
        mss, cwnd = (struct.unpack_from("I", info, at)[0] for at in (SND_MSS_AT, SND_CWND_AT))
        device_line = _ss_device_side(lab, sock.getsockname()[1])
        facts = lab.facts().as_dict()["tcp"]
    assert isinstance(facts, dict)
    assert mss == 1400 - 40 - 12  # IPv4 and TCP headers, and the timestamp option
    assert cwnd == 4  # nothing sent yet: the initial window
    assert "mss:1348" in device_line, device_line
    assert "pmtu:1400" in device_line, device_line
    assert facts["device"]["mtu"] == facts["client"]["mtu"] == 1400
    assert facts["device"]["initcwnd"] == facts["client"]["initcwnd"] == 4


@needs_lab
def test_device_side_sysctls_are_the_kernels_defaults_not_the_hosts(
        request: pytest.FixtureRequest) -> None:
    with _lab(request, "campus") as lab:
        assert lab.state is not None
        out = subprocess.run(["ip", "netns", "exec", lab.state.netns, "sysctl", "-n",
                              "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        facts = lab.facts().as_dict()["tcp"]
    assert [" ".join(line.split()) for line in out[:2]] == ["4096 131072 6291456",
                                                            "4096 16384 4194304"]
    assert isinstance(facts, dict)
    host_rmem = " ".join(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split())
    assert facts["client"]["sysctls"]["net.ipv4.tcp_rmem"] == host_rmem
    # The host's settings unlike the device side's are listed, and only those.
    assert (host_rmem != "4096 131072 6291456") == any(
        d.startswith("net.ipv4.tcp_rmem ") for d in facts["differs"])


@needs_lab
def test_lab_check_prints_both_ends_tcp() -> None:
    command = [sys.executable, "-m", "mgmtbench.cli", "lab", "check", "--profile",
               "campus+device_cc=reno", "--samples", "3"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"TCP: device reno MSS 1448 MTU 1500 initcwnd 10 \| client cubic MSS 1448 "
                     r"MTU 1500", out.stdout), out.stdout
    as_json = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(as_json.stdout)["tcp"]["asked"]["device_cc"] == "reno"


# --- results ---------------------------------------------------------------------------------


def test_results_say_each_ends_tcp_and_the_hosts_differences() -> None:
    record = {"device": {"cc": "bbr", "mtu": 1400, "initcwnd": 10}, "client": {"cc": "cubic"},
              "mismatches": [], "differs": ["net.ipv4.tcp_rmem is 1 2 3 on the benchmark side"]}
    text = describe(json.dumps(record))  # as a run's loader keeps nested values
    assert text.startswith("TCP: device bbr, benchmark side cubic, MTU 1400, initial window 10.")
    assert "Host settings unlike the device's: net.ipv4.tcp_rmem is 1 2 3" in text
    assert describe(float("nan")).startswith("TCP: not recorded")


def test_the_lab_tcp_section_sets_congestion_controls_side_by_side(tmp_path: Path) -> None:
    rows = [{"profile": "regional", "case": case, "device_cc": cc, "median_ms": ms,
             "measured_rtt_ms": 30.0, "tcp": None}
            for case, cc, ms in (("batch-post", "cubic", 33.0), ("batch-post", "bbr", 39.6),
                                 ("sftp-upload", "cubic", 290.0), ("sftp-upload", "bbr", 304.5))]
    section = lab_tcp.render(pd.DataFrame(rows), ReportContext(out=tmp_path))
    text = "\n".join(section.lines)
    assert "| case | cubic ms | cubic RTTs | bbr ms | bbr RTTs | bbr / cubic |" in text
    assert "| batch-post | 33.00 | 1.10 | 39.60 | 1.32 | 1.20 |" in text
    assert "| sftp-upload | 290.00 | 9.67 | 304.50 | 10.15 | 1.05 |" in text


def test_a_run_ends_with_each_labs_tcp_once() -> None:
    class Reporter:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def section(self, title: str) -> None:
            self.lines.append(f"== {title}")

        def write_line(self, line: str) -> None:
            self.lines.append(line)

    def bench(cc: str) -> SimpleNamespace:
        tcp = {"device": {"cc": cc, "mtu": 1500, "initcwnd": 10}, "client": {"cc": "cubic"},
               "mismatches": [], "differs": []}
        return SimpleNamespace(name="t", extra_info={"profile": "regional", "tcp": tcp})

    reporter = Reporter()
    _lab_tcp(reporter, [bench("cubic"), bench("bbr"), bench("cubic")])
    assert reporter.lines == [
        "== the labs' TCP",
        "regional: TCP: device cubic, benchmark side cubic, MTU 1500, initial window 10.",
        "regional: TCP: device bbr, benchmark side cubic, MTU 1500, initial window 10."]
