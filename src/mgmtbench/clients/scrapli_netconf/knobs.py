"""The settings a scrapli-netconf (``scrapli.netconf.Netconf``, libscrapli) user can change
(:mod:`mgmtbench.clients.tuning`); imports nothing of scrapli.

``Netconf`` takes the same ``SessionOptions`` as scrapli's ``Cli`` (:mod:`mgmtbench.clients.scrapli
.knobs`), read by the same libscrapli session, and a ``NetconfOptions`` of its own. Where each
setting acts (libscrapli's ``netconf.zig`` and ``session.zig``): ``Driver.open`` logs in through
``Session.authenticate``, a read loop whose sleeps grow from ``read_min_delay_ns`` to
``read_max_delay_ns`` while nothing comes (the OpenSSH transport's password prompt, then the
device's ``<hello>``); after the open, a thread of its own (``Driver.processLoop``) takes the
session's reads, ``read_size`` bytes at a time, and stores each complete reply, while
``Driver.sendRpc`` writes the RPC and looks for its reply every ``message_poll_interval_ns``.

Not knobs: ``preferred_version`` (with base:1.1 offered, libscrapli picks it; set, it fails the
open: libscrapli's ``determineVersion`` answers "preferred capability unavailable" whichever
version is asked for), ``error_tag`` and ``capabilities_callback`` (what a reply is searched for
and what the client's ``<hello>`` lists: no time), ``operation_timeout_s`` (a bound). The
OpenSSH transport sets ``TCP_NODELAY`` itself (see :mod:`mgmtbench.clients.openssh.knobs`), and
its ``Ciphers``/``IPQoS`` options did not matter for ``ssh``; the libssh2 transport has no socket
option at all (:mod:`mgmtbench.clients.scrapli.knobs`).
"""

from mgmtbench.clients.tuning import Knob

READ_MAX_DELAY = Knob(
    name="read-max-delay",
    change="SessionOptions(read_max_delay_ns=1_000_000)",
    why=("libscrapli's login (Session.authenticate, inside Netconf.open) polls the transport, "
         "doubling its sleep from 5 us to read_max_delay_ns (15 ms) while nothing comes: the "
         "device's password prompt and <hello> wait up to 15 ms each to be read; a 1 ms cap "
         "bounds that wait. Only the open: RPC replies are read by the processing thread. "
         "MEASURED"),
)

READ_SIZE = Knob(
    name="read-size",
    change="SessionOptions(read_size=65_536)",
    why=("libscrapli's processing thread (Driver.processLoop) takes the session's reads "
         "read_size (4,096) bytes at a time: bigger reads mean fewer turns only for replies "
         "larger than 4 KiB. MEASURED"),
    matters=False,
)

MESSAGE_POLL = Knob(
    name="message-poll",
    change="NetconfOptions(message_poll_interval_ns=100_000)",
    why=("after writing an RPC, libscrapli's Driver.sendRpc looks for its reply among the "
         "stored messages every message_poll_interval_ns (1 ms), sleeping between looks: a "
         "reply stored just after a look waits up to 1 ms more; 0.1 ms bounds that. MEASURED"),
)

CLOSE_FORCE = Knob(
    name="close-force",
    change="netconf.close(force=True)  # or NetconfOptions(close_force=True) with `with`",
    why=("Netconf.close() sends <close-session/> and waits for its reply before it stops the "
         "transport; force=True sends none and closes the transport (the device ends the "
         "NETCONF session with its SSH channel, RFC 6242). One round trip less per fresh "
         "session. MEASURED"),
)

KNOBS = (READ_MAX_DELAY, READ_SIZE, MESSAGE_POLL, CLOSE_FORCE)
