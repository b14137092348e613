"""What every NETCONF client adapter shares: the RPCs of each mode and payload
(:mod:`.rpcs`), and how a reply becomes the output a benchmark checks. Declares no client
itself (each library's package under :mod:`mgmtbench.clients` does)."""
