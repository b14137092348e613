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

MEASURED: the summary line.
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
         "framer, and the device's). MEASURED"),
    matters=False,
)

WINDOW_SIZE = Knob(
    name="window-size",
    change=("conn.open_session(subsystem=\"netconf\", encoding=None,\n"
            "                  window=16 * 2**20, max_pktsize=2**18)  # shipped: 2 MiB, 32 KiB"),
    why=("the netconf channel's receive window and largest packet (SSHClientConnection."
         "open_session): the device stops sending only when the 2 MiB window is spent, which "
         "no reply to a show command or a modelled read comes near. MEASURED"),
    matters=False,
)

KNOBS = (BASE_1_0_ONLY, WINDOW_SIZE)
