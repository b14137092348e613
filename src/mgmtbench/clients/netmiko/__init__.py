"""Netmiko: the single-session adapter and the thread-pool fleet runner (one ConnectHandler per
device). Importing this package does not import Netmiko."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="netmiko", order=70, adapter="mgmtbench.clients.netmiko.adapter:NetmikoClient",
               fleet="mgmtbench.clients.netmiko.fleet:NetmikoFleet"),
]
