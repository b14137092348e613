"""The settings a user of the ``ssh`` binary can change (:mod:`mgmtbench.clients.tuning`): options
of ``~/.ssh/config`` or the command line.

What ``ssh`` already does as driven here, so is no knob: it sets ``TCP_NODELAY`` on every
connection, interactive or not (``ssh_packet_set_interactive`` calls ``set_nodelay``
unconditionally; the ControlMaster's ``-N`` connection calls it with ``interactive=0``: seen
under strace, ``TCP_NODELAY`` set on the master's socket and on a plain exec's);
``Compression`` is off by default; ``-F /dev/null`` leaves ``GSSAPIAuthentication`` at its
default ``no``; with ``UserKnownHostsFile`` given, ``UpdateHostKeys`` is off by default; the
destination is an address, so ``AddressFamily`` changes no lookup; ``IdentitiesOnly`` with one
``-i`` key offers that key only (``PreferredAuthentications`` has nothing to skip); an exec
with a command asks for no PTY (``-T`` is the default). ``ControlMaster``/``ControlPersist`` is
no knob but the ``reuse-conn`` mode itself (one connection, a channel per command).

No knob was measured to matter: what costs ``ssh`` time is a process per command (fork/exec,
~11 ms of client CPU per command at local), so there is no ``openssh+tuned``.
"""

from mgmtbench.clients.tuning import Knob

AES128_GCM = Knob(
    name="aes128-gcm",
    change="ssh -o Ciphers=aes128-gcm@openssh.com ...   # or Ciphers in ~/.ssh/config",
    why=("ssh's default cipher is chacha20-poly1305@openssh.com (myproposal.h), a Poly1305 key "
         "per packet; a device without it (the IOS-like emulated one) gets ssh's next choice, "
         "aes128-ctr with an HMAC-SHA2-256 per packet; AES-GCM is one AEAD pass on AES-NI "
         "through OpenSSL. Measured: no change beyond "
         "noise, 5 commands, as shipped vs knob: local reuse-conn 92.1 vs 188.0 ms, fresh-conn "
         "203.7 vs 329.4, pty-fresh 78.4 vs 138.8; regional reuse-conn 424.3 vs 389.9, "
         "fresh-conn 765.9 vs 830.8, pty-fresh 690.4 vs 751.4 (client CPU 11.7 vs 12.0 ms per "
         "command local reuse-conn: the fork/exec of ssh, not the cipher)"),
    matters=False,
)

IPQOS = Knob(
    name="ipqos-none",
    change="ssh -o IPQoS=none ...   # or IPQoS in ~/.ssh/config",
    why=("ssh marks a non-PTY connection (the ControlMaster's) with the bulk DSCP, CS1 in 9.2 "
         "(ssh_packet_set_tos; seen as IP_TOS 8 under strace), which a pfifo_fast qdisc "
         "queues in its lowest band. Measured: no change (no queue to jump on an idle link), "
         "as shipped vs knob: local reuse-conn 92.1 vs 169.4 ms, pty-fresh 78.4 vs 80.9; "
         "regional reuse-conn 424.3 vs 399.8, fresh-conn 765.9 vs 773.0, pty-fresh 690.4 vs "
         "702.0"),
    matters=False,
)

KNOBS = (AES128_GCM, IPQOS)
