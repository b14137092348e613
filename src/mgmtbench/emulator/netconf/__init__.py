"""NETCONF (RFC 6241 over SSH, RFC 6242): the device's ``netconf`` subsystem.

:mod:`.framing` (end-of-message and chunked framing) and :mod:`.session` (hellos, ``<rpc>`` in,
``<rpc-reply>`` out) are the protocol without I/O; :mod:`.operations` answers each operation
from the device's YANG data (:mod:`mgmtbench.emulator.yang`) and, for the published study's
envelope, from its CLI; :mod:`.datastores` holds what a device's sessions share (candidate,
locks, a confirmed commit); :mod:`.channel` serves it on an SSH channel.
"""
