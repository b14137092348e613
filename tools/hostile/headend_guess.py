"""How many passwords one SSH connection to ``mgmtbench headend`` may try, and how fast.

``PYTHONPATH=<tree>/src python tools/hostile/headend_guess.py [GUESSES]``: a head-end (in this
process, on loopback, its proxy unreachable: only the login matters) and one asyncssh client
that offers up to GUESSES wrong passwords on one connection; prints one line.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import asyncssh

from mgmtbench.emulator.https.tls import make_tls_files
from mgmtbench.proxy.headend import Headend, HeadendOptions


async def attack_guess_one_connection(host: str, port: int, guesses: int) -> dict[str, object]:
    """Offer ``guesses`` wrong passwords on one SSH connection to ``host:port``."""
    tried = 0

    class Guesser(asyncssh.SSHClient):
        def password_auth_requested(self) -> str | None:
            nonlocal tried
            tried += 1
            return f"guess{tried}" if tried <= guesses else None

    start = time.monotonic()
    outcome = "logged in"
    try:
        conn = await asyncssh.connect(host, port, username="admin", known_hosts=None,
                                      client_factory=Guesser, preferred_auth="password",
                                      connect_timeout=60, login_timeout=120)
        conn.close()
    except (asyncssh.Error, OSError) as exc:
        outcome = type(exc).__name__
    took = time.monotonic() - start
    return {"tried": min(tried, guesses), "seconds": round(took, 2),
            "per_s": round(min(tried, guesses) / took, 1), "then": outcome}


async def main(guesses: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="headend-guess-"))
    tls = make_tls_files(folder / "tls", ["127.0.0.1"])
    headend = Headend(HeadendOptions(proxy_url="https://127.0.0.1:9", proxy_ca=tls.ca,
                                     device="R1", password="right", state_dir=folder / "h"))
    await headend.start()
    try:
        found = await attack_guess_one_connection("127.0.0.1", headend.port, guesses)
    finally:
        await headend.stop()
    print(f"headend guesses on one connection: {found}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
