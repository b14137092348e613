"""How to serve gNMI beside the emulator: ``grpc.aio`` on the emulator's own (uvloop) event loop,
or grpcio's thread-pool server beside it, each handler handing its call to the loop
(``run_coroutine_threadsafe``) where the device lives. Measured: a warm channel's Get latency
(the study's ``/cli/show/version``, the bare stub) and the server process's CPU per Get.

    python tools/gnmi_server_modes.py [--gets 2000]

Each server runs in a process of its own (this file's ``serve`` mode), so its CPU time is its
own; the client is this process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

MODES = ("aio-on-loop", "aio-on-asyncio-loop", "threads-beside")


async def _serve(mode: str, ready: Path) -> None:
    import grpc

    from mgmtbench.emulator import EmulatorOptions
    from mgmtbench.emulator.gnmi.protos import rpc
    from mgmtbench.emulator.gnmi.server import server_credentials
    from mgmtbench.emulator.gnmi.service import Credentials, DeviceGnmi, GnmiError
    from mgmtbench.emulator.server import Emulator

    aio = mode.startswith("aio-")  # the threaded server uses the HTTPS certificate (https on)
    emulator = Emulator(EmulatorOptions(https=not aio, gnmi=aio))
    await emulator.start()
    endpoint = emulator.endpoints[0]
    assert emulator.tls is not None
    if aio:
        port = endpoint.gnmi_port
    else:
        loop = asyncio.get_running_loop()
        service = DeviceGnmi(endpoint.device, Credentials("admin", "admin"))

        class Threaded(rpc.gNMIServicer):  # type: ignore[misc]
            """The same service's Get, each call handed over to the loop."""

            def Get(self, request: Any, context: Any) -> Any:
                async def call() -> Any:
                    service.check_auth(context.invocation_metadata())
                    return service.get(request)

                try:
                    return asyncio.run_coroutine_threadsafe(call(), loop).result()
                except GnmiError as exc:
                    context.abort(exc.code, str(exc))

        server = grpc.server(ThreadPoolExecutor(max_workers=8))
        rpc.add_gNMIServicer_to_server(Threaded(), server)
        port = server.add_secure_port("127.0.0.1:0",
                                      server_credentials(emulator.tls.cert, emulator.tls.key))
        server.start()
    ready.write_text(f"{port} {emulator.tls.ca}")
    await emulator.serve_forever()


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(mode: str, gets: int) -> tuple[float, float, float]:
    import grpc

    from mgmtbench.emulator.gnmi.paths import command_path
    from mgmtbench.emulator.gnmi.protos import pb, rpc

    ready = Path(f"/tmp/gnmi-mode-{os.getpid()}-{mode}")
    ready.unlink(missing_ok=True)
    child = subprocess.Popen([sys.executable, __file__, "serve", mode, str(ready)])
    try:
        while not ready.exists() or not ready.read_text():
            time.sleep(0.05)
        port, ca = ready.read_text().split()
        channel = grpc.secure_channel(f"127.0.0.1:{port}",
                                      grpc.ssl_channel_credentials(Path(ca).read_bytes()))
        stub = rpc.gNMIStub(channel)
        request = pb.GetRequest(path=[command_path("show version")],
                                encoding=pb.Encoding.Value("ASCII"))
        auth = (("username", "admin"), ("password", "admin"))
        for _ in range(200):  # warm up
            stub.Get(request, metadata=auth)
        cpu = _cpu(child.pid)
        times = []
        for _ in range(gets):
            start = time.perf_counter()
            stub.Get(request, metadata=auth)
            times.append(time.perf_counter() - start)
        cpu = _cpu(child.pid) - cpu
        channel.close()
        return (statistics.median(times) * 1e3, statistics.quantiles(times, n=20)[18] * 1e3,
                cpu / gets * 1e6)
    finally:
        child.terminate()
        child.wait()
        ready.unlink(missing_ok=True)


def main() -> None:
    """Serve one mode (``serve MODE FILE``) or measure both."""
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        from mgmtbench import loopthread

        if sys.argv[2] == "aio-on-asyncio-loop":  # the standard library's loop, not uvloop
            asyncio.run(_serve(sys.argv[2], Path(sys.argv[3])))
        else:
            loopthread.run(_serve(sys.argv[2], Path(sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gets", type=int, default=2000)
    args = parser.parse_args()
    for mode in MODES:
        p50, p95, cpu = _measure(mode, args.gets)
        print(f"{mode:15s} Get p50 {p50:.3f} ms  p95 {p95:.3f} ms  server CPU {cpu:.0f} us/Get")


if __name__ == "__main__":
    main()
