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
close a channel without it, 202 ms with it). That is pygnmi as shipped, and it is timed.

Modes as :mod:`mgmtbench.clients.grpc_gnmi`'s; a kept client is warmed up in ``setup`` with
one Get. pygnmi raises ``gNMIException`` wrapping grpc's error: the status code is taken from it.

Application round trips: not counted, for grpcio's reason (its sockets are its C core's).
"""

from __future__ import annotations

import logging
from typing import Any

from mgmtbench.clients.base import GNMI_MODES, REUSING_MODES, TranslatedClient, Transport
from mgmtbench.clients.gnmi import requests
from mgmtbench.clients.gnmi.common import check_target, translating
from mgmtbench.clients.translate import Translator
from mgmtbench.errors import ClientError
from mgmtbench.targets import Target

try:
    from pygnmi.client import gNMIclient, gNMIException
except ImportError:  # reported by Client.missing()
    gNMIclient = gNMIException = None

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

    _client: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Password login, a CA file."""
        check_target(cls.name, target)

    def _translating(self) -> Translator:
        return translating(self.name)

    def _connect(self) -> Any:
        t = self.target
        # pygnmi's own connect wait (gnmi_timeout, 5 s; twice for a device that never
        # answers: it retries with other ciphers).
        client = gNMIclient(target=(t.host, t.gnmi_port), username=t.username,
                            password=t.password, path_cert=str(t.ca_file))
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
