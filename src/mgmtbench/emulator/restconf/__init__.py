"""RESTCONF (RFC 8040) on the device's HTTPS server: the modelled data of
:mod:`mgmtbench.emulator.yang` as resources, and the published study's CLI envelope beside them
(:mod:`.envelope`). :mod:`.api` answers one request; the HTTPS server hands it those under
``/restconf`` and ``/.well-known/host-meta``."""
