"""httpx at scale over the HTTPS API: one ``httpx.AsyncClient`` (HTTP/1.1, a pool as large as
the fleet), one coroutine per device, ``asyncio.gather`` — how its users fan out.

Phases: ``connect_exec`` is ``send(..., stream=True)`` returning (TCP, TLS, request, response
headers); ``finish`` reads the body and closes the response (the HTTP status is the exit
status); ``exec_again``/``read_output`` the same on the kept connection; ``close`` closes the
fleet's client (its pool) once every session is done: each session gets that time.
"""

from __future__ import annotations

import ssl
import time
from typing import Any
from urllib.parse import quote_plus

from mgmtbench.clients.fleet.base import AsyncRunner, Laps, SessionTimes, guarded_async
from mgmtbench.clients.httpx.adapter import ERRORS, EXEC, HEADERS, HttpxAsyncClient
from mgmtbench.clients.translate import translate_errors
from mgmtbench.errors import AuthenticationFailed, ClientError
from mgmtbench.targets import Target

_TIMEOUT = 60


class HttpxFleet(AsyncRunner):
    """httpx fleet runner: one AsyncClient, one coroutine per device."""
    name = "httpx-async"
    how = "one httpx.AsyncClient (HTTP/1.1 pool) and asyncio.gather"
    adapter = HttpxAsyncClient

    def __init__(self) -> None:
        super().__init__()
        self._client: Any = None  # the current run's client, shared by its sessions

    def run(self, targets: list[Target], command: str) -> list[SessionTimes]:
        """One iteration: the commands' outputs, concatenated in order."""
        import httpx

        first = targets[0]
        if first.ca_file is None:
            raise ClientError("httpx: the targets have no CA file to verify the devices")
        context = self.loaded(first.ca_file, _verify_context)

        async def fleet() -> list[SessionTimes]:
            import asyncio

            client = self._client = httpx.AsyncClient(
                verify=context, auth=(first.username, first.password), trust_env=False,
                headers=HEADERS,
                timeout=_TIMEOUT,
                # held for the run: a busy loop must not let a session's connection expire
                # between its two requests (httpx's default idle expiry, 5 s; see .kept)
                limits=httpx.Limits(max_connections=len(targets),
                                    max_keepalive_connections=len(targets),
                                    keepalive_expiry=None))
            try:
                sessions = await asyncio.gather(
                    *(guarded_async(self.session, t, command) for t in targets))
            finally:
                start = time.perf_counter()
                await client.aclose()
                closed = time.perf_counter() - start
            for times in sessions:
                times.close = closed
            return list(sessions)

        return self._loop.run_until_complete(fleet())

    async def session(self, target: Target, command: str, times: SessionTimes) -> None:
        """One session's phases, timed into ``times``."""
        client = self._client
        url = f"https://{target.host}:{target.https_port}{EXEC}{quote_plus(command, safe='')}"
        laps = Laps(times)
        for phase_exec, phase_read in (("connect_exec", "finish"), ("exec_again", "read_output")):
            async with translate_errors(self.name, ERRORS):
                response = await client.send(client.build_request("GET", url), stream=True)
                laps.lap(phase_exec)
                try:
                    body = await response.aread()
                finally:
                    await response.aclose()
            if response.status_code != 200:
                error = AuthenticationFailed if response.status_code == 401 else ClientError
                raise error(f"httpx: HTTP {response.status_code} from {target.host}")
            times.record(body)
            laps.lap(phase_read)


def _verify_context(ca_file: str) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file)
