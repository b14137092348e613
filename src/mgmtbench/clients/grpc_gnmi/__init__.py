"""grpc-gnmi: gNMI's generated gRPC stub on grpcio and nothing else, the protocol's floor.
Importing this package does not import grpcio."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="grpc-gnmi", order=96,
               adapter="mgmtbench.clients.grpc_gnmi.adapter:GrpcGnmiClient"),
]
