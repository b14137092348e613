"""paramiko: the single-session adapter and the thread-pool fleet runner, sharing one connect
(:mod:`.connect`). Importing this package does not import paramiko."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="paramiko", order=10,
               adapter="mgmtbench.clients.paramiko.adapter:ParamikoClient",
               fleet="mgmtbench.clients.paramiko.fleet:ParamikoFleet",
               knobs="mgmtbench.clients.paramiko.knobs:KNOBS"),
    ClientSpec(name="paramiko+tuned", order=11,
               adapter="mgmtbench.clients.paramiko.adapter:ParamikoClientTuned",
               fleet="mgmtbench.clients.paramiko.fleet:ParamikoFleetTuned"),
]
