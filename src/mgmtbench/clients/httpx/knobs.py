"""The settings an httpx user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
httpx.

What the adapters already do as shipped, so is no knob here: httpcore sets ``TCP_NODELAY`` on
its sockets itself (``httpcore._backends.sync.SyncBackend.connect_tcp``; asyncio's sockets have it
already); the ``SSLContext`` is built once and passed as ``verify=`` (a path or ``True`` would
make a new context, loading the CA file, per client); ``trust_env=False`` (no proxy variables or
``.netrc`` read per request). Pool limits: a fresh client makes one connection whatever its
limits, and the kept modes hold theirs for the client's life (:mod:`.kept`), so neither
``max_keepalive_connections`` nor ``keepalive_expiry`` has anything to change. Transport
``retries`` only retry a failed connect.

No knob was measured to matter, so there is no ``httpx+tuned``: the adapters as shipped already
make the choices a tuned user makes (the shared ``SSLContext``, ``trust_env=False``).
"""

from mgmtbench.clients.tuning import Knob

HTTP2 = Knob(
    name="http2",
    change="httpx.Client(..., http2=True)  # pip install httpx[http2]",
    why=("HTTP/2 offered by ALPN: the device's HPACK-compressed headers and one stream per "
         "request, against an HTTP/1.1 request parsed as text. Measured: slower or no change, "
         "5 commands, as shipped vs knob: httpx local keep-alive 11.8 vs 22.8 ms, "
         "conn-per-iteration 16.2 vs 34.3, fresh-conn 39.3 vs 89.6 (74 vs 100 packets: the "
         "preface and SETTINGS frames and their ACKs); regional keep-alive 181.1 vs 181.4, "
         "fresh-conn 671.6 vs 698.0; httpx-async regional fresh-conn 745.6 vs 745.2. One "
         "request at a time gains nothing from streams, and h2's framing costs CPU"),
    matters=False,
)

KNOBS = (HTTP2,)
