"""One device's state, whichever protocol reads or changes it: its platform (transcripts and
identity), facts, clock, file system, running and saved configuration, the outputs that follow
the configuration, and the client windows its SSH source saw.

Nothing here knows a way of talking to the device (the CLI engine is :mod:`..cli`, the
transports :mod:`..ssh` and :mod:`..https`): they build on this package, never the reverse.
:class:`~.device.Device` is the device itself.
"""
