"""pygnmi: ``pygnmi.client.gNMIclient``, the Python gNMI library most automation uses, as shipped
and tuned (:mod:`.knobs`). Importing this package does not import pygnmi."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="pygnmi", order=95,
               adapter="mgmtbench.clients.pygnmi.adapter:PygnmiClient",
               knobs="mgmtbench.clients.pygnmi.knobs:KNOBS"),
    ClientSpec(name="pygnmi+tuned", order=95,
               adapter="mgmtbench.clients.pygnmi.adapter:PygnmiClientTuned"),
]
