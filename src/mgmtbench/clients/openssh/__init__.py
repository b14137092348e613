"""The OpenSSH client binary (``ssh``): the single-session adapter and the fleet runner (a
ControlMaster per device), and its knobs (:mod:`.knobs`; none matters, so no ``openssh+tuned``).
Nothing to import: the hint names the binary."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="openssh", order=50,
               adapter="mgmtbench.clients.openssh.adapter:OpensshClient",
               fleet="mgmtbench.clients.openssh.fleet:OpensshFleet",
               knobs="mgmtbench.clients.openssh.knobs:KNOBS"),
]
