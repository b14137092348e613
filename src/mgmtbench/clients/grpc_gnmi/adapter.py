"""grpc-gnmi: the generated ``gNMIStub`` on a grpcio channel, every gNMI mode, both payloads:
what any gNMI client library adds shows as its time over this one's.

Connecting: ``grpc.secure_channel(host:port, ssl_channel_credentials(the target's CA))``; every
call carries the ``username`` and ``password`` metadata and a 30 s deadline. A channel connects
at its first call, so a fresh mode's time holds TCP, TLS and HTTP/2's set-up.

Modes (:data:`~mgmtbench.clients.base.GNMI_MODES`):

- ``fresh-conn`` (the study's): per iteration a new channel and ONE Get of every command's path;
- ``fresh-get-per-cmd`` (ours): per iteration a new channel and one Get per command;
- ``reuse-stream`` (the study's): the channel from ``setup``, one unary Get per command;
- ``batch-get`` (ours): the channel from ``setup``, one Get of every path;
- ``batch-set`` (the study's): the channel from ``setup``, every command's update in one Set;
- ``subscribe-once`` (the study's): the channel from ``setup``, one ONCE subscription of every
  path, read to its ``sync_response``.

A kept channel is warmed up in ``setup`` with one Get, as the study's client does.

Application round trips are not counted: grpcio's core opens and reads its own sockets in C and
takes no socket or connection factory from Python (no ``sock=``, no dialer as Go's
``WithContextDialer``), so there is nothing to wrap; the lab's wire tap counts them on the link.
"""

from __future__ import annotations

from typing import Any

from mgmtbench.clients.base import GNMI_MODES, REUSING_MODES, TranslatedClient, Transport
from mgmtbench.clients.gnmi import requests
from mgmtbench.clients.gnmi.common import TIMEOUT, check_target, metadata, translating
from mgmtbench.clients.translate import Translator
from mgmtbench.errors import ClientError
from mgmtbench.targets import Target

try:
    import grpc

    from mgmtbench.emulator.gnmi.paths import parse
    from mgmtbench.emulator.gnmi.protos import pb, rpc
except ImportError:  # reported by Client.missing()
    grpc = None


class GrpcGnmiClient(TranslatedClient):
    """The generated gNMI stub on grpcio (see the module docstring)."""

    name = "grpc-gnmi"
    transport = Transport.GNMI
    modes = GNMI_MODES
    payloads = requests.PAYLOADS
    extra = "gnmi"
    needs = ("grpc", "pygnmi")

    _channel: Any = None
    _stub: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Password login, a CA file."""
        check_target(cls.name, target)

    def __init__(self, target: Target, mode: str, payload: str = "cli") -> None:
        super().__init__(target, mode, payload)
        assert target.ca_file is not None
        self._credentials: Any = None
        self._ca = target.ca_file.read_bytes()
        self._metadata = metadata(target)

    def _translating(self) -> Translator:
        return translating(self.name)

    def _open(self) -> tuple[Any, Any]:
        if self._credentials is None:
            self._credentials = grpc.ssl_channel_credentials(self._ca)
        t = self.target
        host = f"[{t.host}]" if ":" in t.host else t.host
        channel = grpc.secure_channel(f"{host}:{t.gnmi_port}", self._credentials)
        return channel, rpc.gNMIStub(channel)

    def setup(self) -> None:
        """Untimed: open and warm up the kept channel (the modes that keep one)."""
        if self.mode in REUSING_MODES:
            with self._translating(), self._torn_down_on_failure():
                self._channel, self._stub = self._open()
                self._get(self._stub, ["/cli/show/version"], "ASCII")

    def _paths(self, commands: list[str]) -> list[str]:
        return [requests.read_path(c, self.payload) for c in commands]

    def _get(self, stub: Any, specs: list[str], encoding: str) -> Any:
        request = pb.GetRequest(path=[parse(s) for s in specs],
                                encoding=pb.Encoding.Value(encoding))
        return stub.Get(request, metadata=self._metadata, timeout=TIMEOUT)

    def _run(self, commands: list[str]) -> str:
        mode, payload = self.mode, self.payload
        if mode != "batch-set":
            requests.check_commands(commands, payload)
        encoding = requests.encoding(payload)
        if mode in ("fresh-conn", "fresh-get-per-cmd"):
            channel, stub = self._open()
            try:
                if mode == "fresh-conn":
                    return self._outputs(self._get(stub, self._paths(commands), encoding)
                                         .notification)
                return "".join(self._outputs(self._get(stub, [p], encoding).notification)
                               for p in self._paths(commands))
            finally:
                channel.close()
        stub = self._stub
        if mode == "reuse-stream":
            return "".join(self._outputs(self._get(stub, [p], encoding).notification)
                           for p in self._paths(commands))
        if mode == "batch-get":
            return self._outputs(self._get(stub, self._paths(commands), encoding).notification)
        if mode == "batch-set":
            reply = stub.Set(pb.SetRequest(update=self._updates(commands)),
                             metadata=self._metadata, timeout=TIMEOUT)
            return "ok\n" * len(reply.response)
        return self._subscribe_once(stub, commands, encoding)

    def _updates(self, commands: list[str]) -> list[Any]:
        if self.payload == "cli":  # the study's: each command's path, an empty string
            return [pb.Update(path=parse(requests.read_path(c, "cli")),
                              val=pb.TypedValue(string_val="")) for c in commands]
        from mgmtbench.clients.netconf.rpcs import edit_interface

        path = parse(requests.edit_path(edit_interface(self.target.platform)))
        import json

        return [pb.Update(path=path, val=pb.TypedValue(
            json_ietf_val=json.dumps(requests.edit_value(i)).encode()))
            for i in range(len(commands))]

    def _subscribe_once(self, stub: Any, commands: list[str], encoding: str) -> str:
        request = pb.SubscribeRequest(subscribe=pb.SubscriptionList(
            subscription=[pb.Subscription(path=parse(p)) for p in self._paths(commands)],
            mode=pb.SubscriptionList.Mode.Value("ONCE"),
            encoding=pb.Encoding.Value(encoding)))
        notes = []
        for response in stub.Subscribe(iter([request]), metadata=self._metadata,
                                        timeout=TIMEOUT):
            if response.sync_response:
                break
            notes.append(response.update)
        return self._outputs(notes)

    def _outputs(self, notifications: Any) -> str:
        """The round's text: CLI text concatenated, or a JSON line per notification."""
        import json

        out: list[str] = []
        for note in notifications:
            values = []
            for update in note.update:
                kind = update.val.WhichOneof("value")
                if kind in ("json_ietf_val", "json_val"):
                    values.append(json.loads(getattr(update.val, kind)))
                elif kind is None:
                    raise ClientError(f"{self.name}: an update without a value")
                else:
                    values.append(getattr(update.val, kind))
            if self.payload == "cli":
                out.extend(str(v) for v in values)
            else:
                out.append(requests.yang_output(values))
        return "".join(out)

    def teardown(self) -> None:
        """Close the kept channel."""
        channel, self._channel, self._stub = self._channel, None, None
        if channel is not None:
            channel.close()
