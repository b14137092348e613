"""pygnmi: ``gNMIclient(target=(host, port), username, password, path_cert=the target's CA)``,
every gNMI mode, both payloads.

``connect()`` opens a grpcio secure channel with the CA as its root, waits until it is ready
(``channel_ready_future``) and then asks the device's Capabilities (to pick an encoding), so
every connection pygnmi makes costs a Capabilities call more than the bare stub's
(:mod:`mgmtbench.clients.grpc_gnmi`). Reads are ``get(path=[...], encoding=...)``; ``batch-set``
is ``set(update=[(path, value), ...], encoding=...)``: the study's CLI paths with an empty
ASCII value, the ``yang`` payload's a dict pygnmi writes as JSON (pygnmi writes a string value
as its bytes, not as JSON); ``subscribe-once`` is ``subscribe2({"mode": "once", ...})``,
whose updates a thread of pygnmi's puts on a queue, read to the ``sync_response``, then
closed (``close()``: the thread is joined once the device ends the call).

Its fresh modes pay ~200 ms per connection at its end: ``connect()`` waits for the channel with
grpcio's ``channel_ready_future``, which starts grpcio's connectivity-polling thread, and
``close()`` (``channel.close()``) waits for that thread's next 0.2 s tick (measured: 0.2 ms to
close a channel without it, 202 ms with it). That is pygnmi as shipped, and it is timed
(``gnmi_timeout=0``, the ``no-ready-wait`` knob, skips the wait).

Modes as :mod:`mgmtbench.clients.grpc_gnmi`'s; a kept client is warmed up in ``setup`` with
one Get. pygnmi raises ``gNMIException`` wrapping grpc's error: the status code is taken from it.

Application round trips: not counted, for grpcio's reason (its sockets are its C core's).

Knobs (:mod:`.knobs`): ``no-ready-wait`` (``gnmi_timeout=0``), ``skip-capabilities`` (a
subclass whose ``capabilities()`` answers without asking) and ``subscribe-call``
(``subscribe()`` read in the caller's thread instead of ``subscribe2``'s) are
``pygnmi+tuned``'s; ``session-cache`` (one TLS session cache for every connection the client
makes) and ``gzip`` were measured not to matter.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from mgmtbench.clients.base import GNMI_MODES, REUSING_MODES, TranslatedClient, Transport
from mgmtbench.clients.gnmi import requests
from mgmtbench.clients.gnmi.common import check_target, translating
from mgmtbench.clients.pygnmi.knobs import (
    GZIP,
    KNOBS,
    NO_READY_WAIT,
    SESSION_CACHE,
    SKIP_CAPABILITIES,
    SUBSCRIBE_CALL,
)
from mgmtbench.clients.translate import Translator
from mgmtbench.clients.tuning import tuned
from mgmtbench.errors import ClientError
from mgmtbench.targets import Target

try:
    import grpc
    from grpc.experimental.session_cache import ssl_session_cache_lru
    from pygnmi.client import gNMIclient, gNMIException, telemetryParser
except ImportError:  # reported by Client.missing()
    grpc = gNMIclient = gNMIException = telemetryParser = ssl_session_cache_lru = None

#: The encodings the ``skip-capabilities`` knob's client says the device has: those the adapter
#: asks for (``ascii`` for the ``cli`` payload, ``json_ietf`` for ``yang``).
_KNOWN_ENCODINGS = ["json_ietf", "ascii"]


@functools.cache
def _without_capabilities() -> Any:
    """pygnmi's client whose ``connect()`` asks no Capabilities (the ``skip-capabilities``
    knob: a user's subclass)."""

    class Client(gNMIclient):  # type: ignore[misc]
        def capabilities(self) -> dict[str, Any]:
            return {"supported_encodings": list(_KNOWN_ENCODINGS)}

    return Client

# pygnmi logs every failed call at CRITICAL before raising: the raised error says it once.
logging.getLogger("pygnmi").setLevel(logging.CRITICAL + 1)


class PygnmiClient(TranslatedClient):
    """pygnmi's ``gNMIclient`` (see the module docstring)."""

    name = "pygnmi"
    transport = Transport.GNMI
    modes = GNMI_MODES
    payloads = requests.PAYLOADS
    extra = "gnmi"
    needs = ("pygnmi", "grpc")
    all_knobs = KNOBS

    _client: Any = None
    _session_cache: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Password login, a CA file."""
        check_target(cls.name, target)

    def _translating(self) -> Translator:
        return translating(self.name)

    def _connect(self) -> Any:
        t = self.target
        options: list[tuple[str, Any]] = []
        if self.tuned_with(SESSION_CACHE.name):
            if self._session_cache is None:  # one for every connection this client makes
                self._session_cache = ssl_session_cache_lru(64)
            options.append(("grpc.ssl_session_cache", self._session_cache))
        if self.tuned_with(GZIP.name):
            options.append(("grpc.default_compression_algorithm", grpc.Compression.Gzip))
        make = (_without_capabilities() if self.tuned_with(SKIP_CAPABILITIES.name)
                else gNMIclient)
        # As shipped, pygnmi's own connect wait (gnmi_timeout, 5 s; twice for a device that
        # never answers: it retries with other ciphers); none with the no-ready-wait knob.
        client = make(target=(t.host, t.gnmi_port), username=t.username,
                      password=t.password, path_cert=str(t.ca_file), grpc_options=options,
                      **({"gnmi_timeout": 0} if self.tuned_with(NO_READY_WAIT.name) else {}))
        try:
            return self._call(client.connect)
        except BaseException:
            client.close()
            raise

    def setup(self) -> None:
        """Untimed: connect and warm up the kept client (the modes that keep one)."""
        if self.mode in REUSING_MODES:
            with self._translating(), self._torn_down_on_failure():
                self._client = self._connect()
                self._call(lambda: self._client.get(path=["/cli/show/version"],
                                                    encoding="ascii"))

    def _call(self, work: Any) -> Any:
        """One pygnmi call; its ``gNMIException`` as the gRPC error inside, if there is one."""
        try:
            return work()
        except Exception as exc:
            if gNMIException is not None and isinstance(exc, gNMIException):
                cause = exc.orig_exc if getattr(exc, "orig_exc", None) is not None else None
                if cause is not None:
                    raise cause from exc
                raise ClientError(f"{self.name}: {exc}") from exc
            raise

    def _get(self, client: Any, paths: list[str]) -> str:
        encoding = requests.encoding(self.payload).lower()
        reply = self._call(lambda: client.get(path=paths, encoding=encoding))
        return self._outputs(reply.get("notification", []))

    def _run(self, commands: list[str]) -> str:
        mode, payload = self.mode, self.payload
        if mode != "batch-set":
            requests.check_commands(commands, payload)
        paths = [requests.read_path(c, payload) for c in commands]
        if mode in ("fresh-conn", "fresh-get-per-cmd"):
            client = self._connect()
            try:
                if mode == "fresh-conn":
                    return self._get(client, paths)
                return "".join(self._get(client, [p]) for p in paths)
            finally:
                client.close()
        client = self._client
        if mode == "reuse-stream":
            return "".join(self._get(client, [p]) for p in paths)
        if mode == "batch-get":
            return self._get(client, paths)
        if mode == "batch-set":
            reply = self._call(lambda: client.set(update=self._updates(commands),
                                                  encoding=self._set_encoding()))
            return "ok\n" * len(reply.get("response", []))
        return self._subscribe_once(client, paths)

    def _set_encoding(self) -> str:
        return "ascii" if self.payload == "cli" else "json_ietf"

    def _updates(self, commands: list[str]) -> list[tuple[str, Any]]:
        if self.payload == "cli":
            return [(requests.read_path(c, "cli"), "") for c in commands]
        from mgmtbench.clients.netconf.rpcs import edit_interface

        path = requests.edit_path(edit_interface(self.target.platform))
        return [(path, requests.edit_value(i)) for i in range(len(commands))]

    def _subscribe_once(self, client: Any, paths: list[str]) -> str:
        spec = {"subscription": [{"path": p} for p in paths], "mode": "once",
                "encoding": requests.encoding(self.payload).lower()}
        if self.tuned_with(SUBSCRIBE_CALL.name):
            return self._subscribe_call(client, spec)
        notes = []
        subscriber = self._call(lambda: client.subscribe2(subscribe=spec))
        try:
            for message in subscriber:
                if message.get("sync_response"):
                    break
                update = message.get("update")
                if update is not None:
                    notes.append(update)
        finally:  # as pygnmi says: the caller closes a ONCE subscription after its sync
            subscriber.close()
        if subscriber.error is not None:
            raise subscriber.error
        return self._outputs(notes)

    def _subscribe_call(self, client: Any, spec: dict[str, Any]) -> str:
        """The ``subscribe-call`` knob: pygnmi's ``subscribe()``, grpcio's response iterator read
        here, each response parsed as ``subscribe2``'s thread does (``telemetryParser``)."""
        notes = []
        for response in self._call(lambda: client.subscribe(subscribe=spec)):
            message = telemetryParser(response)
            if message.get("sync_response"):
                break
            update = message.get("update")
            if update is not None:
                notes.append(update)
        return self._outputs(notes)

    def _outputs(self, notifications: list[dict[str, Any]]) -> str:
        out: list[str] = []
        for note in notifications:
            values = [u.get("val") for u in note.get("update", [])]
            if self.payload == "cli":
                out.extend(str(v) for v in values)
            else:
                out.append(requests.yang_output(values))
        return "".join(out)

    def teardown(self) -> None:
        """Close the kept client."""
        client, self._client = self._client, None
        if client is not None:
            client.close()


PygnmiClientTuned = tuned(PygnmiClient, KNOBS)
