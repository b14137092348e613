"""The edge proxy: HTTPS over the WAN, SSH on the last hop.

A small HTTPS service next to the devices (``mgmtbench proxy``) that accepts the devices'
ASA-style API for any device behind it and runs the commands on the device over SSH, on a fresh
or a pooled connection; the head-end of an SSH-over-HTTPS tunnel, for tools that must speak SSH;
and the lab topology the study's proxy modes are measured on (the WAN link to the proxy, a campus
link from it to the devices).

- :mod:`.inventory`: the devices behind the proxy;
- :mod:`.ssh`: connecting to a device and running a request's commands (exec or a shell);
- :mod:`.pool`: fresh and pooled SSH connections, with their limits;
- :mod:`.app`: the HTTPS API (routing, caller login, errors as statuses);
- :mod:`.server`: serving it (:class:`~.server.EdgeProxy`, :class:`~.server.ProxyThread`);
- :mod:`.headend`: the tunnel's head-end (``mgmtbench headend``);
- :mod:`.topology`: the lab (WAN, proxy, campus link, devices; the head-end's access link);
- :mod:`.clients`: the HTTPS clients in the study's proxy modes;
- :mod:`.command`: ``mgmtbench proxy``.
"""
