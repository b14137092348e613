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
         "the device may send three times as much before the address is validated). The "
         "device's answers are sized by the device's own setting. MEASURED"),
    matters=False,
)

CUBIC = Knob(
    name="cubic",
    change='QuicConfiguration(..., congestion_control_algorithm="cubic")  # shipped: "reno"',
    why=("the congestion controller of what the client sends (aioquic.quic.congestion): a GET "
         "or a POST of a few hundred bytes never fills reno's initial window of 10 datagrams. "
         "MEASURED"),
    matters=False,
)

KNOBS = (MAX_DATAGRAM_SIZE, CUBIC)
