"""What the NETCONF sessions of one device share: the candidate datastore, the locks, a
confirmed commit waiting for its confirmation, and the sessions themselves (``kill-session``).

The running datastore is the device itself (:class:`~mgmtbench.emulator.yang.datastore.
ModelledDevice`). The candidate is a copy of running's configuration made at its first edit and
dropped at ``commit`` or ``discard-changes``; until then it reads as running. A commit writes
the difference between running and the candidate back through the CLI. A confirmed commit
keeps running's configuration as it was before, and puts it back if no confirming commit
comes in time (or its session ends first, unless it was given a ``persist`` id).
"""

from __future__ import annotations

import copy
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from lxml import etree

from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.netconf.errors import RpcError
from mgmtbench.emulator.yang.apply import ApplyError
from mgmtbench.emulator.yang.datastore import ModelledDevice, modelled

DATASTORES = ("running", "candidate")


class Peer(Protocol):
    """What the datastores know of a session: its id, and how to end it (kill-session)."""

    session_id: int

    def kill(self) -> None:
        """End the session at once."""


@dataclass
class PendingConfirm:
    """A confirmed commit waiting for its confirmation."""

    before: etree._Element  # running's configuration before the commit
    session_id: int
    persist: str | None
    cancel_timer: Callable[[], None]


class DeviceDatastores:
    """One device's NETCONF state shared by its sessions (see the module docstring)."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.model: ModelledDevice = modelled(device)
        self.candidate: etree._Element | None = None  # None: the same as running
        self.locks: dict[str, int] = {}
        self.sessions: dict[int, Peer] = {}
        self.pending: PendingConfirm | None = None
        #: The study's ``<cli>`` edits to the candidate, typed in at the next commit.
        self.pending_cli: list[str] = []
        #: Operations answered, by name (``get``, ``commit`` ...), and sessions begun.
        self.counts: Counter[str] = Counter()
        self._next_id = 1

    # --- sessions ---------------------------------------------------------------------------

    def join(self, peer_factory: Callable[[int], Peer]) -> Peer:
        """A new session with the next session id."""
        session_id = self._next_id
        self._next_id += 1
        self.counts["sessions"] += 1
        peer = peer_factory(session_id)
        self.sessions[session_id] = peer
        return peer

    def leave(self, session_id: int) -> None:
        """A session ended: its locks go, and with its lock on the candidate its changes; a
        confirmed commit it made (without ``persist``) is rolled back."""
        self.sessions.pop(session_id, None)
        for name, holder in list(self.locks.items()):
            if holder == session_id:
                del self.locks[name]
                if name == "candidate":
                    self.candidate = None
                    self.pending_cli = []
        if self.pending is not None and self.pending.session_id == session_id \
                and self.pending.persist is None:
            self.rollback()

    # --- reading ----------------------------------------------------------------------------

    def config(self, name: str) -> etree._Element:
        """A datastore's configuration (shared: copy before changing it)."""
        if name == "candidate" and self.candidate is not None:
            return self.candidate
        return self.model.data(with_state=False)

    # --- locks ------------------------------------------------------------------------------

    def check_unlocked(self, name: str, session_id: int) -> None:
        """``in-use`` if another session holds ``name``'s lock."""
        holder = self.locks.get(name)
        if holder is not None and holder != session_id:
            raise RpcError("in-use", f"the {name} datastore is locked by session {holder}",
                           info={"session-id": str(holder)})

    def lock(self, name: str, session_id: int) -> None:
        """Take ``name``'s lock (``lock-denied`` if anyone holds it, or if the candidate has
        changes not committed)."""
        holder = self.locks.get(name)
        if holder is not None:
            raise RpcError("lock-denied", f"the {name} datastore is locked by session {holder}",
                           type="protocol", info={"session-id": str(holder)})
        if name == "candidate" and self.candidate is not None:
            raise RpcError("lock-denied", "the candidate has changes not committed or "
                           "discarded", type="protocol", info={"session-id": "0"})
        self.locks[name] = session_id

    def unlock(self, name: str, session_id: int) -> None:
        """Give ``name``'s lock back (``operation-failed`` if this session does not hold it)."""
        if self.locks.get(name) != session_id:
            raise RpcError("operation-failed", f"this session holds no lock on {name}",
                           type="protocol")
        del self.locks[name]

    # --- changing ---------------------------------------------------------------------------

    def write(self, name: str, after: etree._Element) -> None:
        """Make ``after`` the configuration of datastore ``name`` (running: through the
        CLI, now)."""
        if name == "candidate":
            self.candidate = after
            return
        self.apply(self.model.data(with_state=False), after)

    def apply(self, before: etree._Element, after: etree._Element) -> None:
        """Write the change from ``before`` to ``after`` to the device."""
        try:
            self.model.commit(before, after)
        except ApplyError as exc:
            raise RpcError("operation-failed", f"the device refused {exc.line.strip()!r}: "
                           f"{exc.output}") from exc

    def commit(self, session_id: int, *, confirmed: bool, timeout: float, persist: str | None,
               persist_id: str | None,
               schedule: Callable[[float, Callable[[], None]], Callable[[], None]]) -> None:
        """``commit``: the candidate to running; confirmed, or confirming a confirmed one."""
        pending = self.pending
        if pending is not None:
            if pending.persist is not None and persist_id != pending.persist:
                if persist_id is not None or session_id != pending.session_id:
                    raise RpcError("invalid-value", "a confirmed commit is pending: give its "
                                   "persist-id", path="/commit/persist-id")
            elif pending.persist is None and session_id != pending.session_id:
                raise RpcError("in-use", "another session's confirmed commit is pending",
                               info={"session-id": str(pending.session_id)})
        elif persist_id is not None:
            raise RpcError("invalid-value", "no confirmed commit is pending",
                           path="/commit/persist-id")
        if self.candidate is None and not confirmed and pending is None:
            return  # nothing to write: the candidate reads as running
        before = copy.deepcopy(self.model.data(with_state=False))
        if self.candidate is not None:
            self.apply(before, self.candidate)
            self.candidate = None
        if confirmed:
            if pending is not None:
                pending.cancel_timer()
                before = pending.before
            self.pending = PendingConfirm(before, session_id, persist,
                                          schedule(timeout, self.rollback))
        elif pending is not None:  # the confirming commit
            pending.cancel_timer()
            self.pending = None

    def cancel_commit(self, session_id: int, persist_id: str | None) -> None:
        """``cancel-commit``: put back what a pending confirmed commit changed."""
        pending = self.pending
        if pending is None:
            raise RpcError("invalid-value", "no confirmed commit is pending")
        if pending.persist is not None and persist_id != pending.persist:
            raise RpcError("invalid-value", "give the pending commit's persist-id",
                           path="/cancel-commit/persist-id")
        if pending.persist is None and session_id != pending.session_id:
            raise RpcError("in-use", "another session's confirmed commit is pending",
                           info={"session-id": str(pending.session_id)})
        self.rollback()

    def rollback(self) -> None:
        """The confirmed commit's time ran out (or it was cancelled): running goes back."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        pending.cancel_timer()
        self.apply(self.model.data(with_state=False), pending.before)


_STORES: weakref.WeakKeyDictionary[Device, DeviceDatastores] = weakref.WeakKeyDictionary()


def datastores(device: Device) -> DeviceDatastores:
    """The device's shared NETCONF state (one per device)."""
    found = _STORES.get(device)
    if found is None:
        found = _STORES[device] = DeviceDatastores(device)
    return found
