"""ncclient: NETCONF over its paramiko SSH transport. Importing this package does not import
ncclient."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="ncclient", order=90,
               adapter="mgmtbench.clients.ncclient.adapter:NcclientClient",
               knobs="mgmtbench.clients.ncclient.knobs:KNOBS"),
    ClientSpec(name="ncclient+tuned", order=90,
               adapter="mgmtbench.clients.ncclient.adapter:NcclientClientTuned"),
]
