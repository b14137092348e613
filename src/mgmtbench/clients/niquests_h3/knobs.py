"""The settings a niquests user can change for HTTP/3 (:mod:`mgmtbench.clients.tuning`); imports
nothing of niquests.

What the adapters already do as shipped, so is no knob here: ``disable_http1=True,
disable_http2=True``, which makes urllib3-future dial QUIC at once. As niquests ships, a first
request goes over TCP and TLS and only an ``Alt-Svc`` answer moves later ones to HTTP/3 (the
device sends none, as most do not: without the flags niquests never speaks HTTP/3 to it).
``quic_cache_layer`` preset with the origin does the same as the flags but keeps TCP as a
fallback: the same connection, so no change of time to measure.

Not knobs, from urllib3-future's source (2.25.904): QUIC's settings are not the user's (its qh3
``QuicConfiguration`` is made in ``contrib/hface/protocols/http3/_qh3.py`` with fixed flow-control
windows and only ``idle_timeout`` from the TLS settings); session tickets are dropped, so no
resumption (see :mod:`.adapter`); the wait for an ACK before a POST's body
(``should_wait_remote_flow_control``) is the library's own rule. ``pool_connections`` and
``pool_maxsize``: one request at a time needs one connection. ``resolver``: the device is an IP
address, which no resolver looks up. ``keepalive_delay``/``keepalive_idle_window``: a PING after
60 s idle, from a watcher that wakes every 5 s; nothing in a benchmark's seconds.
``multiplexed=True`` (lazy responses, every request in flight at once) changes what an
iteration does (all GETs before any answer): a mode, not a setting of these ones.
``revocation_configuration``: OCSP and CRL checks run only for a certificate that names a
responder or a list, which the device's (and a device's self-signed one) does not.

No knob was measured to matter, so there is no ``niquests-h3+tuned``.
"""

from mgmtbench.clients.tuning import Knob

HAPPY_EYEBALLS = Knob(
    name="happy-eyeballs",
    change="niquests.Session(..., happy_eyeballs=True)",
    why=("connects to several of the host's addresses at once and keeps the first to answer "
         "(urllib3-future HTTPConnectionPool._new_conn); a device reached by one address (an IP, "
         "or a name with one record) gets one more getaddrinfo and the same connection. "
         "Measured: no change beyond this machine's noise (+-30 ms between runs at regional "
         "fresh-conn), the same wire round trips, 5 commands, as shipped vs knob, niquests-h3 "
         "local fresh-conn 39.3 vs 32.1 ms, keep-alive 12.0 vs 19.2, batch-post 5.1 vs 8.2; "
         "regional fresh-conn 232.9 vs 278.4, then alone, knob first: 228.9 / 229.0 vs "
         "256.5 / 262.8; keep-alive 171.8 vs 213.5 (again 195.5 vs 188.8), batch-post 74.4 vs "
         "82.1 (again 73.7 vs 75.2); niquests-h3-async regional fresh-conn 236.2 vs 293.1 "
         "(again 237.9 vs 231.0), keep-alive 203.3 vs 241.1 (again 184.8 vs 192.8)"),
    matters=False,
)

KNOBS = (HAPPY_EYEBALLS,)
