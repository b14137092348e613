"""The settings a scrapli-netconf (``scrapli.netconf.Netconf``, libscrapli) user can change
(:mod:`mgmtbench.clients.tuning`); imports nothing of scrapli.

``Netconf`` takes the same ``SessionOptions`` as scrapli's ``Cli`` (:mod:`mgmtbench.clients.scrapli
.knobs`), read by the same libscrapli session, and a ``NetconfOptions`` of its own. Where each
acts in libscrapli 0.0.6 (scrapli 2026.10.14; its ``netconf.zig``, ``session.zig``, and strace):
``open`` logs in through ``Session.authenticate``, a loop whose sleeps double from
``read_min_delay_ns`` to ``read_max_delay_ns`` while nothing comes (the ``ssh`` process's
password prompt, then the device's ``<hello>``); after the open a thread of its own reads the
session, ``read_size`` bytes at a time, and stores each complete reply, and the RPC's caller
waits on a condition that thread signals (a futex woken when the reply is stored), with
``message_poll_interval_ns`` only as each wait's time-out. So the read loop's back-off, which
mattered for scrapli's CLI (``read-max-delay``, every command's reads), is here in the open
only.

Not knobs: ``error_tag`` and ``capabilities_callback`` (what a reply is searched for and what
the client's ``<hello>`` lists besides the base: no time), ``operation_timeout_s`` (a bound). The
OpenSSH transport sets ``TCP_NODELAY`` itself (:mod:`mgmtbench.clients.openssh.knobs`), whose
``Ciphers``/``IPQoS`` options did not matter for ``ssh``; the libssh2 transport has no socket
option (:mod:`mgmtbench.clients.scrapli.knobs`). ``ControlMaster`` through
``extra_open_args`` would keep one SSH connection under every "fresh" session: not a knob, a
different mode (``reuse-session``). What a fresh session costs here is its open: the ``ssh``
process's start, key exchange and login and libscrapli's reads of them, about 125 ms on loopback
(5 RPCs after it: 7 ms), and at regional some 6 RTTs of time beyond the 16 on the wire.

No knob was measured to matter (5 commands, median ms, as shipped vs knob, in one run each:
the figures below; two runs where one was not clear), so there is no ``scrapli-netconf+tuned``.
"""

from mgmtbench.clients.tuning import Knob

READ_MAX_DELAY = Knob(
    name="read-max-delay",
    change="SessionOptions(read_max_delay_ns=1_000_000)",
    why=("the open's login loop (Session.authenticate) sleeps up to read_max_delay_ns (15 ms) "
         "between looks while nothing comes: the password prompt and the <hello> can each "
         "wait up to 15 ms to be read; a 1 ms cap bounds that. RPC replies are not read by "
         "this loop. No change beyond noise: fresh-session regional 656 vs 674 and 649 vs "
         "679 (two runs), local 150 vs 143; as the tuned set with close-force 649 vs 646"),
    matters=False,
)

READ_SIZE = Knob(
    name="read-size",
    change="SessionOptions(read_size=65_536)",
    why=("libscrapli reads the transport and hands replies to the processing thread read_size "
         "(4,096) bytes at a time: bigger reads mean fewer turns only for replies larger "
         "than 4 KiB. No change: reuse-session regional 174.6 vs 172.2, local 4.8 vs 5.2; "
         "fresh-session local 116.7 vs 108.0"),
    matters=False,
)

MESSAGE_POLL = Knob(
    name="message-poll",
    change="NetconfOptions(message_poll_interval_ns=100_000)",
    why=("the RPC's caller waits for its reply on a condition the processing thread signals "
         "when it stores the reply; the interval is only each wait's time-out (strace, 10 "
         "RPCs: 10 waits as shipped, 114 time-outs of 0.1 ms with the knob). More wake-ups, "
         "no earlier reply: reuse-session regional 174.6 vs 166.4 ms, client CPU 1.5 vs 3.5 "
         "ms per command; local 4.8 vs 20.8 and 10.1 vs 6.7 (two runs)"),
    matters=False,
)

CLOSE_FORCE = Knob(
    name="close-force",
    change="netconf.close(force=True)  # or NetconfOptions(close_force=True) with `with`",
    why=("Netconf.close() sends <close-session/> and waits for its reply before it stops the "
         "transport; force=True sends none and stops the ssh process at once (the device "
         "ends the NETCONF session with its SSH channel, RFC 6242): one round trip less on "
         "the wire (15.9 vs 15.0 per fresh session), not in the time, since stopping ssh by "
         "signal and waiting for it costs what the reply did: fresh-session regional 656 vs "
         "628 and 649 vs 669 (two runs), local 150 vs 125; close alone on loopback 3.9 vs "
         "11.4 ms"),
    matters=False,
)

BASE_1_0 = Knob(
    name="base-1-0",
    change=("from scrapli.netconf import Version\n"
            "NetconfOptions(preferred_version=Version.VERSION_1_0)"),
    why=("libscrapli picks base:1.1 when the device offers it: chunked framing, whose replies "
         "the processing thread parses chunk by chunk and whose RPC is written as three "
         "writes (ssh sends each as a packet of its own); base:1.0 keeps the end-of-message "
         "marker. No change: reuse-session regional 171.1 vs 168.9 and 174.6 vs 164.1 (two "
         "runs), local 4.8 vs 9.4; fresh-session regional 639.6 vs 647.1"),
    matters=False,
)

KNOBS = (READ_MAX_DELAY, READ_SIZE, MESSAGE_POLL, CLOSE_FORCE, BASE_1_0)
