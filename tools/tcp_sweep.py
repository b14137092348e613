"""Which TCP settings change a result: one setting at a time against the lab's defaults.

    sudo python tools/tcp_sweep.py [--profile regional] [--rounds 15]

For each variant a lab is built (the profile with the variant's overrides, or the defaults with
one sysctl changed in the device's namespace after it is up, or the delay line without offloads),
and httpx on a kept HTTPS connection times ``batch-post`` of 5 show commands, ``keep-alive`` of
5, and one ``show running-config``; the median of ``--rounds`` rounds is printed in ms and in RTTs
(the lab's measured RTT), beside the defaults' as a ratio. What moved a result is what the lab
sets from the profile (:mod:`mgmtbench.lab.tcp`); what did not is recorded only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

from mgmtbench.clients import adapter
from mgmtbench.emulator import Credentials
from mgmtbench.emulator.oracle import show_commands
from mgmtbench.lab import Lab, resolve
from mgmtbench.targets import Login, lab_targets
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, Driver

# name -> (profile overrides, device-namespace sysctls, environment of the lab)
VARIANTS: dict[str, tuple[str, dict[str, str], dict[str, str]]] = {
    "defaults (cubic, MTU 1500, initcwnd 10)": ("", {}, {}),
    "device_cc=bbr": ("+device_cc=bbr", {}, {}),
    "client_cc=bbr": ("+client_cc=bbr", {}, {}),
    "mtu=9000": ("+mtu=9000", {}, {}),
    "mtu=1400": ("+mtu=1400", {}, {}),
    "initcwnd=4": ("+initcwnd=4", {}, {}),
    "device tcp_autocorking=0": ("", {"net.ipv4.tcp_autocorking": "0"}, {}),
    "device tcp_slow_start_after_idle=0": ("", {"net.ipv4.tcp_slow_start_after_idle": "0"}, {}),
    "device tcp_notsent_lowat=16384": ("", {"net.ipv4.tcp_notsent_lowat": "16384"}, {}),
    "device tcp_rmem/wmem 32 MB": ("", {"net.ipv4.tcp_rmem": "4096 131072 33554432",
                                        "net.ipv4.tcp_wmem": "4096 16384 33554432"}, {}),
    "delay line without offloads (no TSO/GSO)": ("", {}, {"MGMTBENCH_DELAYLINE_OFFLOAD": "0"}),
}
CASES = (("batch-post", 5), ("keep-alive", 5), ("show running-config", 1))


def measure(lab: Lab, rounds: int) -> dict[str, float]:
    """Median seconds per case on ``lab``'s first device."""
    login = Login(USERNAME, PASSWORD, SECRET)
    target = lab_targets(lab, login, count=1)[0]
    out = {}
    for case, count in CASES:
        mode = "keep-alive" if case == "show running-config" else case
        commands = ["show running-config"] if count == 1 else show_commands("cisco_ios", count)
        driver = Driver(adapter("httpx")(target, mode))
        driver.setup()
        try:
            driver.run(commands)
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                driver.run(commands)
                times.append(time.perf_counter() - start)
        finally:
            driver.teardown()
        out[case] = statistics.median(times)
    return out


def main() -> None:
    """Run every variant and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="regional")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    creds = Credentials(username=USERNAME, password=PASSWORD, enable_secret=SECRET)
    base: dict[str, float] = {}
    print(f"profile {args.profile}; median of {args.rounds} rounds; ms (RTTs, x defaults)")
    print(f"{'variant':<42}" + "".join(f"{case:>30}" for case, _ in CASES))
    for name, (overrides, sysctls, env) in VARIANTS.items():
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            with Lab(resolve(args.profile + overrides), credentials=creds,
                     calibration_samples=5) as lab:
                assert lab.state is not None
                assert lab.calibration is not None
                for key, value in sysctls.items():
                    subprocess.run(["ip", "netns", "exec", lab.state.netns, "sysctl", "-qw",
                                    f"{key}={value}"], check=True)
                rtt = lab.calibration.rtt_ms
                got = measure(lab, args.rounds)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        base = base or got
        cells = "".join(f"{got[c] * 1000:>12.1f} ({got[c] * 1000 / rtt:4.2f}, {got[c] / base[c]:4.2f}x)"
                        for c, _ in CASES)
        print(f"{name:<42}{cells}", flush=True)


if __name__ == "__main__":
    main()
