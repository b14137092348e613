"""The settings a pygnmi user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
pygnmi or grpcio.

What pygnmi (on grpcio) already does as shipped, so is no knob here: gRPC's core sets
``TCP_NODELAY`` on every TCP socket it connects (``PrepareTcpClientSocket`` in
``event_engine/posix_engine/tcp_socket_utils.cc`` calls ``SetSocketLowLatency(1)``), and no
channel option turns it off. The adapter gives ``path_cert`` (the device's CA), as a user
should: without it ``connect()`` fetches the device's certificate first
(``ssl.get_server_certificate``, a TCP and TLS connection more per connect), and with
``skip_verify`` it also parses it. ``debug`` is off, ``show_diff`` unset (set, every ``set()``
makes two Gets more), no ``grpc_proxy`` in the environment.

Not knobs: keepalive (``gNMIclient(..., keepalive_time_ms=...)``) pings a connection only after
that long without data, which no mode leaves it; ``grpc.max_receive_message_length`` (4 MiB)
bounds a reply, which a show output never nears; ``grpc.so_reuseport`` is a server socket's;
``grpc.enable_http_proxy`` acts only with a proxy in the environment; grpcio's
``SingleThreadedUnaryStream`` acts on unary-stream calls, and gNMI has none (Get, Set and
Capabilities are unary, Subscribe is bidirectional); pygnmi's encoding auto-detection (from
Capabilities) picks the default encoding only, and the adapter names it in every call.
"""

from mgmtbench.clients.tuning import Knob

NO_READY_WAIT = Knob(
    name="no-ready-wait",
    change="client = gNMIclient(target=(host, port), ..., gnmi_timeout=0)  # shipped: 5",
    why=("gNMIclient.connect waits for the channel with grpc.channel_ready_future "
         "(wait_for_connect), which starts grpcio's connectivity-polling thread "
         "(_channel._poll_connectivity, a 0.2 s watch_connectivity_state); close() then "
         "waits for that thread's next tick. connect() skips the wait when its timeout is "
         "not above 0, and the Capabilities call it makes next connects the channel (an "
         "unreachable device then fails that call, UNAVAILABLE, instead of the wait). "
         "FIGURES"),
)

SKIP_CAPABILITIES = Knob(
    name="skip-capabilities",
    change=("class Client(gNMIclient):\n"
            "    def capabilities(self):  # connect() asks only to pick a default encoding\n"
            "        return {\"supported_encodings\": [\"json_ietf\", \"ascii\"]}\n"
            "\n"
            "client = Client(target=(host, port), ...)"),
    why=("gNMIclient.connect calls Capabilities on every connection, a round trip before the "
         "first request, only to choose the default encoding (and later to check a requested "
         "one against the list, convert_encoding); connect() has no option to skip it, so the "
         "change overrides pygnmi's capabilities() in a subclass with the encodings the user "
         "knows the device has (a call of client.capabilities() then answers that too). "
         "FIGURES"),
)

SESSION_CACHE = Knob(
    name="session-cache",
    change=("from grpc.experimental.session_cache import ssl_session_cache_lru\n"
            "\n"
            "cache = ssl_session_cache_lru(64)  # once, for every client\n"
            "client = gNMIclient(target=(host, port), ...,\n"
            "                    grpc_options=[(\"grpc.ssl_session_cache\", cache)])"),
    why=("grpcio starts every TLS connection afresh unless the channel has a session cache "
         "(the grpc.ssl_session_cache option); with one a new connection resumes the last "
         "session, which spares verifying the device's certificate chain but, in TLS 1.3, no "
         "round trip. FIGURES"),
    matters=False,
)

GZIP = Knob(
    name="gzip",
    change=("client = gNMIclient(target=(host, port), ...,\n"
            "                    grpc_options=[(\"grpc.default_compression_algorithm\",\n"
            "                                   grpc.Compression.Gzip)])"),
    why=("compresses the messages the client sends (pygnmi has no compression argument; the "
         "channel option is grpcio's); a device answers compressed only if it is set to. "
         "FIGURES"),
    matters=False,
)

SUBSCRIBE_CALL = Knob(
    name="subscribe-call",
    change=("from pygnmi.client import telemetryParser\n"
            "\n"
            "for response in client.subscribe(subscribe={..., \"mode\": \"once\"}):\n"
            "    message = telemetryParser(response)  # what subscribe2's iterator yields\n"
            "    if message.get(\"sync_response\"):\n"
            "        break"),
    why=("subscribe2({\"mode\": \"once\"}) (OnceSubscriber) runs the call in a thread of its own "
         "that puts each response on a queue, the caller reads the queue, and close() joins "
         "the thread; pygnmi's subscribe() returns grpcio's response iterator, read in the "
         "caller's thread, and ends its request stream after the one request. FIGURES"),
    matters=False,
)

KNOBS = (NO_READY_WAIT, SKIP_CAPABILITIES, SESSION_CACHE, GZIP, SUBSCRIBE_CALL)
