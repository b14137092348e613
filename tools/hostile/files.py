"""Hostile files and options against the ``mgmtbench`` command line (area ``files``).

Each attack writes a small hostile input into a scratch folder, runs one ``mgmtbench`` command on
it in a child process bounded in memory (``RLIMIT_AS``) and time, and returns its figures: exit
status, seconds, peak RSS, whether a traceback was printed, and the last line of its error output.
``python tools/hostile/files.py ATTACK [--src SRC]`` prints them on one line (``--src``: the
``src`` folder of the tree to try; default: this worktree's).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PYTHON = os.environ.get("MGMTBENCH_PYTHON", "/work/main/.nox/tests/bin/python")
MEMORY = 2 << 30  # bytes of address space a probed command may take
TIMEOUT = 60.0  # seconds a probed command may run


def run_cli(args: list[str], src: Path, *, timeout: float = TIMEOUT,
            memory: int = MEMORY, env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``mgmtbench ARGS`` from ``src``, bounded; its figures."""
    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        os.setsid()

    env = {**os.environ, **(env or {}), "PYTHONPATH": str(src)}
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([PYTHON, "-m", "mgmtbench.cli", *args], stdout=subprocess.DEVNULL,
                                stderr=err, stdin=subprocess.DEVNULL, env=env, preexec_fn=bound)
        deadline = start + timeout
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    return {"rc": proc.returncode, "seconds": round(time.monotonic() - start, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024), "timed_out": timed_out,
            "traceback": "Traceback (most recent call last)" in text,
            "last": (lines[-1][:160] if lines else "")}


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def laughs_yaml(levels: int = 9) -> str:
    """A "billion laughs" Ansible inventory (~600 bytes): each level of ``all``'s variables a
    list of ten aliases of the one before, the host's address the last of them."""
    lines = ["all:", "  vars:", "    x0: &x0 [lol]"]
    for i in range(1, levels + 1):
        lines.append(f"    x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * 10) + "]")
    lines += ["  hosts:", "    r1:", f"      ansible_host: *x{levels}",
              "      ansible_network_os: ios"]
    return "\n".join(lines) + "\n"


def alias_groups_yaml(depth: int = 5, width: int = 10) -> str:
    """An Ansible group tree where every group's children are the same aliased group, ``depth``
    deep: ``width ** depth`` group visits from a few hundred bytes."""
    lines = ["all:", "  children:"]
    body = "{hosts: {r1: {ansible_host: 127.0.0.70}}}"
    for level in range(depth):
        kids = ", ".join(f"g{level}_{k}: *a{level - 1}" if level else f"g0_{k}: {body}"
                         for k in range(width))
        lines.append(f"    l{level}: &a{level} {{children: {{{kids}}}}}")
    return "\n".join(lines) + "\n"


def attack_yaml_laughs(folder: Path, src: Path) -> dict[str, object]:
    return run_cli(["inventory", "list", str(_write(folder, "inv.yaml", laughs_yaml()))], src,
                   env={"MGMTBENCH_USERNAME": "admin", "MGMTBENCH_PASSWORD": "admin"})


def attack_yaml_alias_groups(folder: Path, src: Path) -> dict[str, object]:
    return run_cli(["inventory", "list", str(_write(folder, "inv.yaml", alias_groups_yaml()))],
                   src)


def attack_yaml_deep(folder: Path, src: Path) -> dict[str, object]:
    text = "all:\n  hosts:\n    r1:\n      v: " + "[" * 20000 + "]" * 20000 + "\n"
    return run_cli(["inventory", "list", str(_write(folder, "inv.yaml", text))], src)


def attack_json_deep(folder: Path, src: Path) -> dict[str, object]:
    text = '{"name": "lab", "topology": {"nodes": {"r1": {"x": ' + "[" * 100000 + "]" * 100000 \
        + "}}}}"
    return run_cli(["inventory", "list", str(_write(folder, "topo.clab.json", text))], src)


def attack_yaml_bignum(folder: Path, src: Path) -> dict[str, object]:
    text = f"all:\n  hosts:\n    r1:\n      ansible_port: {'9' * 5000}\n"
    return run_cli(["inventory", "list", str(_write(folder, "inv.yaml", text))], src)


def attack_toml_bignum(folder: Path, src: Path) -> dict[str, object]:
    text = f'[hosts.r1]\nhost = "127.0.0.70"\nssh_port = {"9" * 5000}\n'
    return run_cli(["inventory", "list", str(_write(folder, "inv.toml", text))], src)


def _bench(index: int, extra: str = "") -> str:
    return (f'{{"name": "test_x[{index}]", "group": null, "params": {{"client": "c", '
            '"mode": "m"}, "stats": {"mean": 0.001, "min": 0.001, "max": 0.001, "rounds": 5}, '
            f'"extra_info": {{{extra}}}}}')


def _run_file(folder: Path, benches: list[str]) -> Path:
    return _write(folder, "run.json", '{"benchmarks": [' + ",".join(benches) + "]}")


def attack_report_keys(folder: Path, src: Path) -> dict[str, object]:
    benches = [_bench(i, f'"k{i}": {i}') for i in range(40_000)]  # a new key per benchmark
    run = _run_file(folder, benches)
    return run_cli(["report", str(run), "--out", str(folder / "out")], src, timeout=120)


def attack_report_bigint(folder: Path, src: Path) -> dict[str, object]:
    run = _run_file(folder, [_bench(0, '"commands": ' + "9" * 5000)])
    return run_cli(["report", str(run), "--out", str(folder / "out")], src)


def attack_report_rtt_text(folder: Path, src: Path) -> dict[str, object]:
    run = _run_file(folder, [_bench(0, '"measured_rtt_ms": "fast", "backend": "x", '
                                         '"profile": "lan", "commands": 1')])
    return run_cli(["report", str(run), "--out", str(folder / "out")], src)


def attack_report_long_out(folder: Path, src: Path) -> dict[str, object]:
    run = _run_file(folder, [_bench(0)])
    return run_cli(["report", str(run), "--out", str(folder / ("o" * 300))], src)


def _serve(args: list[str], src: Path) -> dict[str, object]:
    return run_cli(["serve", "--ssh-port", "0", "--https-port", "0", "--bind", "127.0.0.70",
                    *args], src, timeout=15)


def attack_serve_nan_timeout(folder: Path, src: Path) -> dict[str, object]:
    return _serve(["--login-timeout", "nan"], src)


def attack_serve_zero_timeout(folder: Path, src: Path) -> dict[str, object]:
    return _serve(["--https-idle-timeout", "0"], src)


def attack_serve_inf_delay(folder: Path, src: Path) -> dict[str, object]:
    return _serve(["--processing-delay", "inf"], src)


def attack_serve_state_dir_foreign(folder: Path, src: Path) -> dict[str, object]:
    """A non-empty folder mgmtbench did not make (a stand-in for /etc): what lands in it."""
    foreign = folder / "etc"
    foreign.mkdir()
    (foreign / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    result = _serve(["--state-dir", str(foreign)], src)
    result["written"] = sorted(p.name for p in foreign.iterdir() if p.name != "passwd")
    return result


def _passive_opens() -> int:
    """TCP connections accepted in this network namespace so far (``/proc/net/snmp``)."""
    lines = [line.split() for line in Path("/proc/net/snmp").read_text().splitlines()
             if line.startswith("Tcp:")]
    return int(lines[1][lines[0].index("PassiveOpens")])


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def attack_inventory_amplify(folder: Path, src: Path, *, hosts: int = 2000,
                             seconds: float = 20.0, parallel: int = 256) -> dict[str, object]:
    """``inventory check --parallel 256`` on ``hosts`` names that are all 127.0.0.70, against a
    ``mgmtbench serve`` there, for ``seconds``: the connections that address accepted. Runs in
    a network namespace of its own (``unshare -n``: root), so the kernel's count of accepted
    connections is this probe's alone."""
    if os.environ.get("HOSTILE_FILES_NETNS") != "1":
        done = subprocess.run(
            ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable,
             __file__, "inventory-amplify", "--src", str(src)],
            env={**os.environ, "HOSTILE_FILES_NETNS": "1"}, capture_output=True, text=True,
            timeout=seconds + 90)
        line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
        return {"inner": line.removeprefix("inventory-amplify ")}
    address = "127.0.0.70"
    ssh_port, https_port = _free_port(address), _free_port(address)
    env = {**os.environ, "PYTHONPATH": str(src), "MGMTBENCH_PASSWORD": "admin"}
    server = subprocess.Popen(
        [PYTHON, "-m", "mgmtbench.cli", "serve", "--bind", address, "--ssh-port", str(ssh_port),
         "--https-port", str(https_port), "--netconf-port", "0", "--gnmi-port", "0",
         "--no-http3"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if line.startswith("Press Ctrl-C"):
                break
        inventory = _write(folder, "many.toml", "".join(
            f'[hosts.r{i}]\nhost = "{address}"\nplatform = "cisco_ios"\nusername = "admin"\n'
            f"ssh_port = {ssh_port}\nhttps_port = {https_port}\n" for i in range(hosts)))
        before = _passive_opens()
        result = run_cli(["inventory", "check", str(inventory), "--parallel", str(parallel),
                          "--json"], src, timeout=seconds, env={"MGMTBENCH_PASSWORD": "admin"})
        opened = _passive_opens() - before
    finally:
        server.terminate()
        server.wait(timeout=20)
    return {"connections": opened, "per_s": round(opened / float(str(result["seconds"])), 1),
            "seconds": result["seconds"], "traceback": result["traceback"],
            "said": result["last"]}


ATTACKS: dict[str, Callable[[Path, Path], dict[str, object]]] = {
    name.removeprefix("attack_").replace("_", "-"): function
    for name, function in dict(globals()).items() if name.startswith("attack_")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("attack", choices=sorted(ATTACKS))
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[2] / "src")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-files-") as scratch:
        figures = ATTACKS[args.attack](Path(scratch), args.src)
    print(args.attack, " ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
