"""Hussh (Rust-backed SSH for Python): the single-session adapter on its blocking ``Connection``
(the Rust ssh2 crate over libssh2) and a thread-pool fleet runner. No async client: its
``AsyncConnection`` (and ``MultiConnection``, built on it) runs on russh, which offers no key
exchange the emulated devices offer (see :mod:`.adapter`). ``hussh+tuned``: its connection through
``proxy_command`` to socat with ``TCP_NODELAY``, the one setting that moves time (:mod:`.knobs`).
Importing this package does not import hussh."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="hussh", order=25, adapter="mgmtbench.clients.hussh.adapter:HusshClient",
               fleet="mgmtbench.clients.hussh.fleet:HusshFleet",
               knobs="mgmtbench.clients.hussh.knobs:KNOBS"),
    ClientSpec(name="hussh+tuned", order=25,
               adapter="mgmtbench.clients.hussh.adapter:HusshClientTuned",
               fleet="mgmtbench.clients.hussh.fleet:HusshFleetTuned"),
]
