"""asyncssh: the single-session adapter and the ``asyncio.gather`` fleet runner, sharing one set
of connect options (:mod:`.connect`), and its knobs (:mod:`.knobs`; none matters, so no
``asyncssh+tuned``). Importing this package does not import asyncssh."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="asyncssh", order=40,
               adapter="mgmtbench.clients.asyncssh.adapter:AsyncsshClient",
               fleet="mgmtbench.clients.asyncssh.fleet:AsyncsshFleet",
               knobs="mgmtbench.clients.asyncssh.knobs:KNOBS"),
]
