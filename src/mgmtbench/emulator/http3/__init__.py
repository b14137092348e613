"""The device's API over HTTP/3 (QUIC, aioquic) on the emulator's own loop.

:mod:`.server` accepts QUIC connections (a cap per device, handshake and idle time-outs,
single-use session tickets for 0-RTT); :mod:`.asgi` bridges each request to the ASGI app the
HTTPS server serves too; :mod:`.early` is RFC 8470's rule for requests that came in early data.
"""
