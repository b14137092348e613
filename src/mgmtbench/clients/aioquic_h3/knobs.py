"""The settings an aioquic user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
aioquic.

A client's choices are its :class:`aioquic.quic.configuration.QuicConfiguration`. What is no knob
here, and why:

- Session tickets and address tokens (``session_ticket=``, ``token=``): a connection that
  resumes, or sends its first request as early data, is a mode of its own (``0rtt-resumption``,
  ``0rtt``), timed beside ``fresh-conn``.
- ``idle_timeout`` (60 s): the kept modes' connection lives for seconds; nothing closes it.
- ``initial_rtt`` (0.1 s, "for internal purposes, not guaranteed to be stable" in aioquic's
  own source): it sets the probe time-out before the first RTT sample (``QuicPacketRecovery``),
  so it changes only when a packet of the handshake is lost, and the profiles measured have no
  loss.
- ``max_data`` and ``max_stream_data`` (1 MiB each): flow control that a show command's answer
  of a few kB never reaches.
- The acknowledgement delay (1 ms, aioquic's ``K_GRANULARITY``) is not configurable.

No knob was measured to matter: aioquic as the adapter ships it is its own tuned client, so there
is no ``aioquic-h3+tuned``.
"""

from mgmtbench.clients.tuning import Knob

MAX_DATAGRAM_SIZE = Knob(
    name="max-datagram-size",
    change="QuicConfiguration(..., max_datagram_size=1452)  # shipped: 1200",
    why=("the largest datagram the client sends (QuicConnection pads its Initial to it, so "
         "the device may send three times as much before the address is validated, which "
         "matters only to an answer sent with the handshake: 0-RTT). A GET or POST fits in "
         "1,200 bytes, and the device's answers are sized by its own setting. Measured: no "
         "change beyond this machine's noise, the same wire round trips, 5 commands, as "
         "shipped vs knob: local fresh-conn 32.6 vs 32.7 ms, keep-alive 14.8 vs 16.5, "
         "batch-post 6.3 vs 6.4; regional fresh-conn 220.6 vs 272.0 (again 253.7 vs 249.1), "
         "keep-alive 169.5 vs 220.0 (again 172.2 vs 181.3), batch-post 37.3 vs 50.3 (again "
         "44.2 vs 49.7): 6.7 / 5.0 / 1.0 wire RTTs both"),
    matters=False,
)

CUBIC = Knob(
    name="cubic",
    change='QuicConfiguration(..., congestion_control_algorithm="cubic")  # shipped: "reno"',
    why=("the congestion controller of what the client sends (aioquic.quic.congestion): a GET "
         "or a POST of a few hundred bytes never fills reno's initial window of 10 datagrams. "
         "Measured: no change beyond this machine's noise, the same wire round trips, as "
         "shipped vs knob: local fresh-conn 32.6 vs 35.6 ms (again 41.8 vs 32.8), keep-alive "
         "14.8 vs 20.9 (again 37.4 vs 35.0), batch-post 6.3 vs 7.2; regional fresh-conn 220.6 vs "
         "282.2 (again 253.7 vs 265.8), keep-alive 169.5 vs 184.9 (again 172.2 vs 180.8), "
         "batch-post 37.3 vs 47.3 (again 44.2 vs 41.8)"),
    matters=False,
)

KNOBS = (MAX_DATAGRAM_SIZE, CUBIC)
