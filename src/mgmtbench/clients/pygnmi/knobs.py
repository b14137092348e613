"""The settings a pygnmi user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
pygnmi or grpcio.

What pygnmi (on grpcio) already does as shipped, so is no knob here: gRPC's core sets
``TCP_NODELAY`` on every TCP socket it connects (``PrepareTcpClientSocket`` in
``event_engine/posix_engine/tcp_socket_utils.cc`` calls ``SetSocketLowLatency(1)``; read back
from grpcio's socket to the device: 1), and no channel option turns it off. The adapter gives
``path_cert`` (the device's CA), as a user should: without it ``connect()`` fetches the
device's certificate first (``ssl.get_server_certificate``, a TCP and TLS connection more per
connect), and with ``skip_verify`` it also parses it. ``debug`` is off, ``show_diff`` unset (set,
every ``set()`` makes two Gets more), no ``grpc_proxy`` in the environment.

Not knobs: keepalive (``gNMIclient(..., keepalive_time_ms=...)``) pings a connection only after
that long without data, which no mode leaves it; ``grpc.max_receive_message_length`` (4 MiB)
bounds a reply, which a show output never nears; ``grpc.so_reuseport`` is a server socket's;
``grpc.enable_http_proxy`` acts only with a proxy in the environment; grpcio's
``SingleThreadedUnaryStream`` acts on unary-stream calls, and gNMI has none (Get, Set and
Capabilities are unary, Subscribe is bidirectional); pygnmi's encoding auto-detection (from
Capabilities) picks the default encoding only, and the adapter names it in every call;
``grpc.enable_retries`` off (grpcio's retry filter keeps each call's messages for a retry)
changed nothing on the bare stub (loopback, a warm channel, 3 x 500 and 3 x 750 Gets each way:
1.49 vs 1.64 and 1.81 vs 1.75 ms, client CPU 0.43 vs 0.46 and 0.49 vs 0.47 ms per Get).
"""

from mgmtbench.clients.tuning import Knob

NO_READY_WAIT = Knob(
    name="no-ready-wait",
    change="client = gNMIclient(target=(host, port), ..., gnmi_timeout=0)  # shipped: 5",
    why=("gNMIclient.connect waits for the channel with grpc.channel_ready_future "
         "(wait_for_connect), which starts grpcio's connectivity-polling thread "
         "(_channel._poll_connectivity, 0.2 s watches), and close() waits for that thread's "
         "next tick: 0 to 200 ms per connection, by how long the work after connecting took. "
         "connect() skips the wait when its timeout is 0, and the Capabilities call it makes "
         "next connects the channel (a device that cannot be reached then fails that call, "
         "UNAVAILABLE, no longer bounded by gnmi_timeout). As shipped vs knob, 5 commands, "
         "fresh-conn, two runs: local 209.2 vs 6.4 ms and 212.6 vs 10.4; regional 301.1 vs "
         "162.2 and 302.6 vs 167.9 (9.9 vs 5.4 RTTs), client CPU 2.7 vs 1.8 ms per command; "
         "fresh-get-per-cmd (five Gets after connecting, then close near a tick) regional "
         "306.4 vs 319.3, no gain there"),
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
         "knows the device has (a call of client.capabilities() then answers that too). Alone "
         "it is hidden behind the close wait (as shipped vs knob, fresh-conn: local 209.2 vs "
         "209.1 ms, regional 301.1 vs 300.2, 7.2 vs 5.9 wire round trips); with no-ready-wait "
         "it is one round trip: no-ready-wait vs both (tuned), regional fresh-conn 162.2 vs "
         "131.2 and 167.9 vs 131.3 ms (5.4 vs 4.3 RTTs; the bare stub, grpc-gnmi, 130.4 and "
         "130.8), fresh-get-per-cmd 319.3 vs 261.2; local within noise (6.4 vs 8.0, 10.4 vs "
         "8.1)"),
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
         "session, which would spare verifying the device's certificate chain (in TLS 1.3, no "
         "round trip). It does not resume: a grpcio server with the emulator's certificate "
         "saw ssl_session_reused false on every connection made with the cache (grpcio 1.85, "
         "TLS 1.3). No change: fresh-conn local 209.2 vs 207.8 ms, regional 301.1 vs 299.9; "
         "on loopback, the bare stub, 3 x 100 and 3 x 150 fresh channels with a Get each "
         "way: 10.05 vs 8.55 and 9.56 vs 9.15 ms, client CPU 4.14 vs 3.87 and 4.16 vs "
         "4.19 ms"),
    matters=False,
)

GZIP = Knob(
    name="gzip",
    change=("client = gNMIclient(target=(host, port), ...,\n"
            "                    grpc_options=[(\"grpc.default_compression_algorithm\",\n"
            "                                   grpc.Compression.Gzip)])"),
    why=("compresses the messages the client sends (pygnmi has no compression argument; the "
         "channel option is grpcio's); a device answers compressed only if it is set to, and "
         "the emulated one is not (reuse-stream's bytes on the wire: 13,285 vs 13,305). No "
         "change beyond noise, as shipped vs knob, two runs: reuse-stream local 7.3 vs 12.2 "
         "and 7.3 vs 8.1 ms, regional 165.2 vs 165.7 and 166.7 vs 175.1; batch-set (five "
         "updates, 719 vs 659 bytes) local 1.9 vs 3.1 and 5.9 vs 2.4, regional 33.9 vs 33.8 "
         "and 34.5 vs 35.0"),
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
    why=("subscribe2({\"mode\": \"once\"}) (OnceSubscriber) starts a thread per "
         "subscription that puts each response on a queue for the caller, and close() joins "
         "it: every response crosses threads. pygnmi's subscribe() returns grpcio's response "
         "iterator, read in the caller's thread (its request stream ends after the one "
         "request). subscribe-once, as shipped vs knob: local 7.5 vs 6.0, 8.8 vs 6.8 and 11.8 "
         "vs 6.5 ms in three runs; on loopback, 3 x 200 subscriptions of five paths each way, "
         "8.57 vs 4.26 and 5.53 vs 3.55 ms, client CPU 4.66 vs 2.97 and 3.19 vs 2.37 ms; "
         "regional within noise (39.1 vs 36.0, 41.8 vs 40.6, 39.7 vs 40.6)"),
)

KNOBS = (NO_READY_WAIT, SKIP_CAPABILITIES, SESSION_CACHE, GZIP, SUBSCRIBE_CALL)
