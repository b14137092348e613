"""gNMI (gRPC Network Management Interface, v0.8) on the emulated device: Capabilities, Get, Set
and Subscribe over gRPC with TLS (port 9339 in labs), on the OpenConfig data of
:mod:`mgmtbench.emulator.yang` and, as the published study's ``cli`` paths, on the CLI's own
output (:mod:`.service`, :mod:`.server`)."""
