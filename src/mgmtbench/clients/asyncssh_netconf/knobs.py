"""The settings a user of NETCONF by hand on asyncssh can change (:mod:`mgmtbench.clients.tuning`);
imports nothing of asyncssh.

What the adapter already does as shipped, so is no knob here: asyncssh's connection as the
asyncssh adapter makes it (``TCP_NODELAY`` set by asyncssh itself, the password only; its cipher
and key-exchange knobs were measured not to matter: :mod:`mgmtbench.clients.asyncssh.knobs`),
straight to the ``password`` method (``preferred_auth``, as the study's Go client: asyncssh would
otherwise try keyboard-interactive first where the device offers it, a round trip more), its
``<hello>`` written at once, before the device's is read (not after: a round trip less per
session), ``<close-session/>`` written without waiting for its reply, and a reply read in
64 KiB reads (``SSHReader.read(65536)``), each fed whole to the framer.

No knob was measured to matter (5 commands, CLI envelope unless said, median ms, as shipped vs
knob, in one run with the shipped client between its knobs), so there is no
``asyncssh-netconf+tuned``: the floor is as fast as shipped.
"""

from mgmtbench.clients.tuning import Knob

BASE_1_0_ONLY = Knob(
    name="base-1-0",
    change=("hello = ('<hello xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"><capabilities>'\n"
            "         '<capability>urn:ietf:params:netconf:base:1.0</capability>'\n"
            "         '</capabilities></hello>]]>]]>')  # base:1.1 left out"),
    why=("a <hello> offering base:1.0 only keeps the end-of-message framing (]]>]]>) instead "
         "of RFC 6242's chunked framing, which base:1.1 on both sides switches to: a reply is "
         "found by one search for the marker rather than parsed chunk by chunk (the client's "
         "framer, and the device's). No change: reuse-session regional 160.9 vs 163.5, local "
         "4.4 vs 4.4; fresh-session regional 438.4 vs 448.1, local 20.6 vs 20.2; batch-rpc "
         "regional 35.2 vs 36.1; modelled reads (yang) reuse-session regional 173.8 vs 176.8"),
    matters=False,
)

WINDOW_SIZE = Knob(
    name="window-size",
    change=("conn.open_session(subsystem=\"netconf\", encoding=None,\n"
            "                  window=16 * 2**20, max_pktsize=2**18)  # shipped: 2 MiB, 32 KiB"),
    why=("the netconf channel's receive window and largest packet (SSHClientConnection."
         "open_session): the device stops sending only when the 2 MiB window is spent, which "
         "no reply to a show command or a modelled read comes near. No change: reuse-session "
         "regional 160.9 vs 163.1, yang 173.8 vs 179.5; fresh-session regional 438.4 vs "
         "441.8; batch-rpc regional 35.2 vs 35.6"),
    matters=False,
)

KNOBS = (BASE_1_0_ONLY, WINDOW_SIZE)
