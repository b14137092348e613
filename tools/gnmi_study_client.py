"""clibench's own gNMI client modes against the emulator and against clibench's Go gNMI server,
on loopback, alternated: the study's client unchanged (it sends no credentials, so the emulator
runs with ``--gnmi-anonymous``), the same ``show version`` text from both servers.

    python tools/gnmi_study_client.py --bench PATH/clibench-gnmi-bench \\
        --server PATH/clibench-gnmi-server [--iterations 200] [--rounds 2]

Both binaries are built outside this repository (clibench v0.7.0's ``internal/bench`` GNMI()
and ``internal/gnmiserver`` behind small mains). Prints each mode's p50 per round, the study's
round-trip count and the ratio of the means.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def _serve_ours(state: Path) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", "0", "--https-port", "0",
         "--no-netconf", "--gnmi-anonymous", "--state-dir", str(state)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    port = 0
    for line in process.stdout:
        if found := re.search(r"gnmic -a [^ ]+:(\d+) ", line):
            port = int(found.group(1))
        if line.startswith("Press Ctrl-C"):
            break
    if not port:
        raise SystemExit("mgmtbench serve did not start its gNMI server")
    return process, port


def _show_version(port: int, ca: bytes) -> str:
    import grpc

    from mgmtbench.emulator.gnmi.paths import command_path
    from mgmtbench.emulator.gnmi.protos import pb, rpc

    with grpc.secure_channel(f"127.0.0.1:{port}", grpc.ssl_channel_credentials(ca)) as channel:
        reply = rpc.gNMIStub(channel).Get(pb.GetRequest(
            path=[command_path("show version")], encoding=pb.Encoding.Value("ASCII")),
            timeout=10)
    return str(reply.notification[0].update[0].val.ascii_val)


def main() -> None:
    """Run both servers, the study's client against each, alternated."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", required=True, help="clibench-gnmi-bench binary")
    parser.add_argument("--server", required=True, help="clibench-gnmi-server binary")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from mgmtbench.testing.sshd import free_port

    folder = Path(tempfile.mkdtemp(prefix="gnmi-study-client-"))
    ours, port = _serve_ours(folder / "state")
    go = None
    try:
        transcripts = folder / "transcripts"
        transcripts.mkdir()
        (transcripts / "show_version.txt").write_text(
            _show_version(port, (folder / "state" / "tls" / "ca.pem").read_bytes()))
        go_port = free_port()
        go = subprocess.Popen([args.server, "-addr", f"127.0.0.1:{go_port}", "-hostname", "R1",
                               "-transcripts", str(transcripts)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert go.stderr is not None
        if not any("listening" in line for line in go.stderr):
            raise SystemExit(f"{args.server} did not start")
        found: dict[tuple[str, str], list[tuple[float, int, int]]] = {}
        servers = [("mgmtbench", port), ("go", go_port)]
        for index in range(args.rounds):
            for name, at in servers if index % 2 == 0 else servers[::-1]:
                out = subprocess.run([args.bench, "-addr", f"127.0.0.1:{at}", "-n",
                                      str(args.iterations), "-commands", "5"],
                                     capture_output=True, text=True, timeout=600, check=True)
                for row in json.loads(out.stdout):
                    found.setdefault((name, row["operation"]), []).append(
                        (row["p50_ms"], row.get("round_trips", -1), row["errors"]))
        for mode in ("fresh-conn", "reuse-stream", "batch-set", "subscribe-once"):
            mine, theirs = found[("mgmtbench", mode)], found[("go", mode)]
            ratio = statistics.mean(m[0] for m in mine) / statistics.mean(t[0] for t in theirs)
            print(f"{mode:15s} mgmtbench p50 {[round(m[0], 3) for m in mine]} ms "
                  f"({mine[0][1]} RTs, {sum(m[2] for m in mine)} errors)  Go "
                  f"{[round(t[0], 3) for t in theirs]} ms ({theirs[0][1]} RTs)  "
                  f"ratio {ratio:.2f}")
    finally:
        for process in (ours, go):
            if process is not None:
                process.terminate()
                process.wait()


if __name__ == "__main__":
    main()
