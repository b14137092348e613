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
            "response = httpx.Client(verify=context, ...).get(url)\n"
            'stream = response.extensions["network_stream"]\n'
            'context.session = stream.get_extra_info("ssl_object").session'),
    why=("neither httpx nor Python's ssl resumes a TLS session on its own: one SSLContext keeps "
         "no client sessions, so every new connection is a full handshake unless the previous "
         "connection's session is offered (httpcore's connect_tcp then "
         "ssl_context.wrap_socket(sock, server_hostname=...), so a context subclass can offer "
         "it). At TLS 1.2 (the emulated IOS device's) an abbreviated handshake takes one round "
         "trip, not two, and skips the certificate's check. MEASURED"),
)

HTTP2 = Knob(
    name="http2",
    change="httpx.Client(..., http2=True)  # pip install httpx[http2]",
    why=("HTTP/2 offered beside HTTP/1.1 (ALPN): the device's RESTCONF answers over h2, "
         "HPACK-compressed headers, one stream per request. MEASURED"),
    matters=False,
)

KNOBS = (TLS_RESUMPTION, HTTP2)
