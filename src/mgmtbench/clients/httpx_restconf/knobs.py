"""The settings an httpx user can change for RESTCONF (:mod:`mgmtbench.clients.tuning`); imports
nothing of httpx.

Not httpx's own knobs module (:mod:`mgmtbench.clients.httpx.knobs`): the same library, but
RESTCONF's modes are not the CLI API's. The CLI API has TLS resumption as a mode of its own
(``tls-resume``); RESTCONF's ``fresh-conn`` is the study's, a full handshake per request, so
here resumption is what a user changes in their code.

What the adapter already does as shipped, so is no knob here (as for the CLI API's httpx): the
``SSLContext`` is built once and passed as ``verify=``; ``trust_env=False``; httpcore sets
``TCP_NODELAY`` itself. Pool limits: ``fresh-conn`` makes a client, so one connection, per
request, and the kept modes hold their one connection for the client's life
(:mod:`mgmtbench.clients.httpx.kept`): neither ``max_keepalive_connections`` nor
``keepalive_expiry`` has anything to change. ``Accept`` (JSON or XML) is the mode
``json-vs-xml``. HTTP/2 alone (no HTTP/1.1 offered) is the client ``httpx-restconf-h2``.
"""

from mgmtbench.clients.tuning import Knob

TLS_RESUMPTION = Knob(
    name="tls-resumption",
    change=("class Resuming(ssl.SSLContext):  # httpx has no option; httpcore calls wrap_socket\n"
            "    session = None\n"
            "    def wrap_socket(self, sock, **kwargs):\n"
            "        return super().wrap_socket(sock, session=self.session, **kwargs)\n"
            "context = Resuming(ssl.PROTOCOL_TLS_CLIENT)\n"
            "context.load_verify_locations(ca_file)\n"
            "with httpx.Client(verify=context, ...) as client:  # each new connection\n"
            "    response = client.get(url)\n"
            '    stream = response.extensions["network_stream"]\n'
            '    context.session = stream.get_extra_info("ssl_object").session'),
    why=("neither httpx nor Python's ssl resumes a TLS session on its own: one SSLContext keeps "
         "no client sessions, so every new connection is a full handshake unless the previous "
         "connection's session is offered (httpcore's connect_tcp calls "
         "ssl_context.wrap_socket(sock, server_hostname=...), so a context subclass can offer "
         "it). At TLS 1.2 (the emulated IOS device's) a resumed handshake takes one round trip, "
         "not two. As shipped vs knob vs tuned, 5 commands: regional fresh-conn 642.5 vs 488.5 "
         "vs 527.8 ms (20.2 vs 15.2 wire RTTs), again 647.3 vs 534.0 vs 531.0; "
         "conn-per-iteration 265.4 vs 240.2 vs 230.1 (8.1 vs 7.1 RTTs), again 276.3 vs 236.4 "
         "vs 248.4; local fresh-conn 25.5 vs 19.2 vs 20.2, again 49.9 vs 43.2 vs 34.6; client "
         "CPU about the same (regional fresh-conn 6.4 vs 6.2 ms a command). Nothing to change "
         "on a kept connection (keep-alive, batch-patch). At TLS 1.3 a resumption takes the "
         "round trip a full handshake takes (not measured)"),
)

HTTP2 = Knob(
    name="http2",
    change="httpx.Client(..., http2=True)  # pip install httpx[http2]",
    why=("HTTP/2 offered beside HTTP/1.1 (ALPN): the device's RESTCONF answers over h2, "
         "HPACK-compressed headers, one stream per request. Measured: slower or no change, "
         "5 commands, as shipped vs knob, the same wire round trips: local fresh-conn 25.5 vs "
         "41.6 ms, keep-alive 7.8 vs 9.4, batch-patch 2.0 vs 3.0; regional fresh-conn 642.5 vs "
         "665.5 (again 647.3 vs 707.4), keep-alive 171.1 vs 178.7, batch-patch 35.1 vs 36.6; "
         "client CPU higher (regional fresh-conn 5.3 vs 8.0 ms a command). One request at a "
         "time gains nothing from streams, and h2's framing costs CPU"),
    matters=False,
)

KNOBS = (TLS_RESUMPTION, HTTP2)
