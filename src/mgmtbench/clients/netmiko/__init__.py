"""Netmiko: the single-session adapter and the thread-pool fleet runner (one ConnectHandler per
device), as shipped and tuned (:mod:`.knobs`). Importing this package does not import Netmiko."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="netmiko", order=70, adapter="mgmtbench.clients.netmiko.adapter:NetmikoClient",
               fleet="mgmtbench.clients.netmiko.fleet:NetmikoFleet",
               knobs="mgmtbench.clients.netmiko.knobs:KNOBS"),
    ClientSpec(name="netmiko+tuned", order=71,
               adapter="mgmtbench.clients.netmiko.adapter:NetmikoClientTuned",
               fleet="mgmtbench.clients.netmiko.fleet:NetmikoFleetTuned"),
]
