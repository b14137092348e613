"""gNMI Subscribe on one device: ONCE, POLL and STREAM (SAMPLE, ON_CHANGE; TARGET_DEFINED is
ON_CHANGE here), with ``updates_only`` and ``suppress_redundant``.

Every subscription's first answer is one notification per subscribed path, then
``sync_response``. ONCE ends the stream there; POLL answers each ``poll`` request the same way;
STREAM goes on: a SAMPLE subscription sends its path's values every ``sample_interval``
(nanoseconds; 0: the device's 1 s), an ON_CHANGE one sends the leaves that changed, as soon as a
change is made. A change is heard through the device's :attr:`~mgmtbench.emulator.device.
device.Device.watchers` (called after every CLI line any session runs; NETCONF and gNMI Sets
write through the CLI too): the subscription looks again, in the loop's next turn, only when the
configuration's change count moved, and sends the leaves whose values differ (a removed leaf
as a ``delete``). State that moves without a configuration change (the clock) is SAMPLE's.

Responses go out through one writer (gRPC takes one write at a time).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mgmtbench.emulator.gnmi import data as gdata
from mgmtbench.emulator.gnmi import paths
from mgmtbench.emulator.gnmi.protos import grpc, pb
from mgmtbench.emulator.gnmi.service import (
    DeviceGnmi,
    GnmiError,
    Resolved,
    cli_value,
    invalid,
    resolve,
    scalar_value,
)
from mgmtbench.emulator.yang.datastore import VERSIONS, platform_cli

#: SAMPLE's interval when the request gives none (nanoseconds).
DEFAULT_SAMPLE = 1_000_000_000
#: The shortest SAMPLE interval the device takes (1 ms).
MIN_SAMPLE = 1_000_000
_STREAM, _ONCE, _POLL = 0, 1, 2
_TARGET_DEFINED, _ON_CHANGE, _SAMPLE = 0, 1, 2


@dataclass
class Sub:
    """One subscribed path."""

    where: Resolved
    mode: int
    interval: int
    suppress: bool
    last: dict[str, tuple[Any, object]] = field(default_factory=dict)
    last_sample: bytes | None = None


class Subscription:
    """One Subscribe call (see the module docstring)."""

    def __init__(self, service: DeviceGnmi, read: Callable[[], Any],
                 write: Callable[[Any], Any]) -> None:
        self.service = service
        self._read = read
        self._write = write
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._tasks: list[asyncio.Task[Any]] = []
        self._encoding = "JSON"
        self._prefix: Any = None
        self._check_pending = False
        self._version: object = None

    async def run(self) -> None:
        """Serve the call until it ends (ONCE: after the first answer)."""
        first = await self._read()
        if first is grpc.aio.EOF or first is None:
            return
        if not first.HasField("subscribe"):
            raise invalid("the first SubscribeRequest must carry a subscribe list")
        spec = first.subscribe
        self._encoding = pb.Encoding.Name(spec.encoding)
        if self._encoding not in ("JSON", "JSON_IETF", "PROTO", "ASCII"):
            raise GnmiError(grpc.StatusCode.UNIMPLEMENTED,
                            f"encoding {self._encoding} is not supported")
        self._prefix = spec.prefix if spec.HasField("prefix") else None
        subs = [self._sub(one, spec.mode) for one in spec.subscription]
        if not subs:
            raise invalid("the subscribe list names no path")
        mode = spec.mode
        self.service.count(f"Subscribe {pb.SubscriptionList.Mode.Name(mode)}")
        if mode == _ONCE:
            await self._answer_all(subs, direct=True)
            return
        writer = asyncio.ensure_future(self._writer())
        try:
            if mode == _POLL:
                await self._answer_all(subs, direct=False)
                while True:
                    request = await self._read()
                    if request is grpc.aio.EOF or request is None:
                        return
                    if not request.HasField("poll"):
                        raise invalid("a POLL subscription takes only poll requests")
                    await self._answer_all(subs, direct=False)
            if not spec.updates_only:
                await self._answer_all(subs, direct=False)
            else:
                self._queue.put_nowait(pb.SubscribeResponse(sync_response=True))
            self._stream(subs)
            while True:  # until the client closes its side or cancels
                request = await self._read()
                if request is grpc.aio.EOF or request is None:
                    return
        finally:
            self._stop()
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer

    def _sub(self, one: Any, list_mode: int) -> Sub:
        where = resolve(self._prefix, one.path)
        if not where.cli:
            self.service.steps(where)  # INVALID_ARGUMENT now, not later
        mode = one.mode if list_mode == _STREAM else _SAMPLE
        interval = one.sample_interval or DEFAULT_SAMPLE
        if mode == _SAMPLE and list_mode == _STREAM and interval < MIN_SAMPLE:
            raise invalid(f"sample_interval {interval} ns is below the device's "
                          f"{MIN_SAMPLE} ns")
        return Sub(where, mode, interval, one.suppress_redundant)

    def _updates(self, sub: Sub) -> list[Any]:
        return list(self.service.updates(sub.where, self._encoding))

    def _notification(self, updates: list[Any], deletes: list[Any] | None = None) -> Any:
        return pb.SubscribeResponse(update=pb.Notification(
            timestamp=time.time_ns(), prefix=self._prefix, update=updates,
            delete=deletes or []))

    async def _answer_all(self, subs: list[Sub], direct: bool) -> None:
        for sub in subs:
            updates = self._updates(sub)
            if not updates:
                where = sub.where
                raise GnmiError(grpc.StatusCode.NOT_FOUND,
                                f"no data at {paths.text(where.origin, where.elems)}")
            if sub.mode in (_ON_CHANGE, _TARGET_DEFINED):
                sub.last = self._leaves(sub)
            message = self._notification(updates)
            if direct:
                await self._write(message)
            else:
                self._queue.put_nowait(message)
        sync = pb.SubscribeResponse(sync_response=True)
        if direct:
            await self._write(sync)
        else:
            self._queue.put_nowait(sync)

    async def _writer(self) -> None:
        while True:
            message = await self._queue.get()
            await self._write(message)

    # --- STREAM --------------------------------------------------------------------------------

    def _stream(self, subs: list[Sub]) -> None:
        watching = [sub for sub in subs if sub.mode in (_ON_CHANGE, _TARGET_DEFINED)]
        for sub in subs:
            if sub.mode == _SAMPLE:
                self._tasks.append(asyncio.ensure_future(self._sample(sub)))
        if watching:
            self._watching = watching
            self._loop = asyncio.get_running_loop()
            self._version = self._config_version()
            self.service.device.watchers.append(self._heard)

    def _stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.service.device.watchers.remove(self._heard)
        for task in self._tasks:
            task.cancel()

    async def _sample(self, sub: Sub) -> None:
        loop = asyncio.get_running_loop()
        interval = sub.interval / 1e9
        due = loop.time() + interval
        while True:
            await asyncio.sleep(max(0.0, due - loop.time()))
            due += interval
            if due < loop.time():  # fell behind (a slow client): no burst to catch up
                due = loop.time() + interval
            updates = self._updates(sub)
            if sub.suppress:
                blob = b"".join(u.SerializeToString() for u in updates)
                if blob == sub.last_sample:
                    continue
                sub.last_sample = blob
            self._queue.put_nowait(self._notification(updates))

    def _config_version(self) -> object:
        device = self.service.device
        return VERSIONS[platform_cli(device.platform)](device), device.hostname

    def _heard(self) -> None:
        """A CLI line ran somewhere on the device: look again in the next loop turn if the
        configuration changed."""
        if self._check_pending:
            return
        version = self._config_version()
        if version == self._version:
            return
        self._version = version
        self._check_pending = True
        # The device's sessions run on this loop; a caller in another thread (a test's or a
        # tool's CLI session) hands the check over to it.
        self._loop.call_soon_threadsafe(self._changed)

    def _changed(self) -> None:
        self._check_pending = False
        for sub in self._watching:
            now = self._leaves(sub)
            updates = [pb.Update(path=path, val=value) for key, (path, value) in now.items()
                       if sub.last.get(key, (None, None))[1] != value]
            deletes = [path for key, (path, _) in sub.last.items() if key not in now]
            sub.last = now
            if updates or deletes:
                self._queue.put_nowait(self._notification(updates, deletes))

    def _leaves(self, sub: Sub) -> dict[str, tuple[Any, object]]:
        """The path's leaves now: path text -> (path, value)."""
        where = sub.where
        if where.cli:
            text = self.service.run(paths.command_of(where.origin, where.elems))
            path = pb.Path(elem=where.elems[where.prefix_length:])
            return {"": (path, cli_value(text, self._encoding))}
        service = self.service
        keys = service.model.keys
        found: dict[str, tuple[Any, object]] = {}
        steps = service.steps(where)
        for node in gdata.find(service.data(), steps, keys, where.origin != "rfc7951"):
            for leaf_steps, value in gdata.leaves(node.node, node.steps, keys):
                relative = leaf_steps[where.prefix_length:]
                path = pb.Path(elem=[pb.PathElem(name=s.name, key=dict(s.keys))
                                     for s in relative])
                found[str(relative)] = (path, self._leaf_value(value))
        return found

    def _leaf_value(self, value: object) -> Any:
        if self._encoding == "PROTO":
            return scalar_value(value)
        blob = gdata.dumps(value)
        return (pb.TypedValue(json_ietf_val=blob) if self._encoding == "JSON_IETF"
                else pb.TypedValue(json_val=blob))
